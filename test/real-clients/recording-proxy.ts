/**
 * A pass-through on loopback between an MCP client and the gateway that writes down what went
 * over the wire: each HTTP request (method, path, whether it carried the expected bearer token)
 * with its JSON-RPC body, and each JSON-RPC message of the answer, whether a JSON body or an SSE
 * stream (where the gateway's elicitations travel). Bytes are forwarded untouched.
 */
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface WireLine {
  /** `client → gateway` or `gateway → client`. */
  direction: "→" | "←";
  text: string;
}

export interface RecordingProxy {
  /** The MCP endpoint to give the client. */
  url: string;
  lines: WireLine[];
  close(): Promise<void>;
}

/** `token` is only compared, never written: the log says `Bearer <token>` or what else came. */
export async function startRecordingProxy(target: URL, token: string): Promise<RecordingProxy> {
  const lines: WireLine[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        const streamed = String(answer.headers["content-type"] ?? "").includes("text/event-stream");
        recordAnswer(answer, streamed, (text) => lines.push({ direction: "←", text }));
        answer.pipe(outgoing);
      },
    );
    upstream.on("error", (error) => {
      lines.push({ direction: "←", text: `(proxy) the gateway did not answer: ${error.message}` });
      outgoing.destroy();
    });
    incoming.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      lines.push({
        direction: "→",
        text: `${incoming.method} ${incoming.url} [${authorization(incoming, token)}]${body ? ` ${body}` : ""}`,
      });
    });
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${target.pathname}`,
    lines,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function authorization(incoming: IncomingMessage, token: string): string {
  const header = incoming.headers.authorization;
  if (header === undefined) return "no Authorization";
  return header === `Bearer ${token}` ? "Authorization: Bearer <token>" : "Authorization: (another value)";
}

/** Each `data:` line of an SSE answer as it arrives, or the whole body of any other answer. */
function recordAnswer(answer: IncomingMessage, streamed: boolean, record: (text: string) => void): void {
  const status = `${answer.statusCode}`;
  let buffered = "";
  answer.setEncoding("utf8");
  answer.on("data", (chunk: string) => {
    buffered += chunk;
    if (!streamed) return;
    const complete = buffered.lastIndexOf("\n");
    if (complete === -1) return;
    for (const line of buffered.slice(0, complete).split("\n")) {
      if (line.startsWith("data:")) record(`${status} (sse) ${line.slice(5).trim()}`);
    }
    buffered = buffered.slice(complete + 1);
  });
  answer.on("end", () => {
    if (!streamed) record(`${status}${buffered ? ` ${buffered}` : ""}`);
  });
}
