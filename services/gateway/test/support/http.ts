/**
 * Raw HTTP against the gateway, for what an SDK client never sends: forged Host and Origin
 * headers, huge or malformed bodies, missing or unknown session ids.
 */
import { request } from "node:http";

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON, or the first SSE `data:` line parsed as JSON; undefined otherwise. */
  json: unknown;
}

export const MCP_ACCEPT = "application/json, text/event-stream";

export function initializeBody(id: number | string = 1): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: {},
      clientInfo: { name: "raw-test", version: "1.0.0" },
    },
  });
}

export function rawRequest(
  baseUrl: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawResponse> {
  const url = new URL(options.path ?? "/mcp", baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? "POST",
        headers: {
          accept: MCP_ACCEPT,
          ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: parse(text) });
        });
        res.on("error", reject);
      },
    );
    // A server that answers before reading a large body may reset the connection while we write.
    req.on("error", reject);
    if (options.body !== undefined) req.end(options.body);
    else req.end();
  });
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const data = text.split("\n").find((line) => line.startsWith("data: ") && line.length > 6);
    if (!data) return undefined;
    try {
      return JSON.parse(data.slice(6));
    } catch {
      return undefined;
    }
  }
}

/** Reads a streamed SSE response one JSON-RPC message at a time. */
export function sseMessages(response: Response): {
  next(): Promise<Record<string, unknown>>;
  cancel(): void;
} {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const queue: Array<Record<string, unknown>> = [];
  return {
    async next() {
      for (;;) {
        const queued = queue.shift();
        if (queued) return queued;
        const { done, value } = await reader.read();
        if (done) throw new Error("the SSE stream ended");
        buffer += decoder.decode(value, { stream: true });
        const events = buffer.split("\n\n");
        buffer = events.pop() ?? "";
        for (const event of events) {
          const data = event
            .split("\n")
            .filter((line) => line.startsWith("data: "))
            .map((line) => line.slice(6))
            .join("\n");
          if (data.trim() !== "") queue.push(JSON.parse(data));
        }
      }
    },
    cancel() {
      reader.cancel().catch(() => undefined);
    },
  };
}
