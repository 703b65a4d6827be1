/**
 * A model endpoint on loopback that speaks the OpenAI Responses API as Codex streams it
 * (`POST <base>/responses`, Server-Sent Events: `response.created`, `response.output_item.done`,
 * `response.completed`), with a script instead of a model: a user message is answered with a call
 * of the one tool it is told to call, found among the MCP tools Codex offers; that tool's output
 * is answered with a message quoting it. Every exchange is kept for the transcript.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ModelExchange {
  /** The namespace/name pairs of the MCP tools Codex offered under `namespace`. */
  offered: string[];
  /** The last input item, summarized: what the model is answering. */
  answering: string;
  /** What the model streamed back, summarized. */
  replied: string;
}

export interface ScriptedModel {
  /** The provider's `base_url` for Codex (ends in `/v1`). */
  baseUrl: string;
  exchanges: ModelExchange[];
  close(): Promise<void>;
}

interface InputItem {
  type?: string;
  role?: string;
  content?: Array<{ type?: string; text?: string }> | string;
  output?: unknown;
}

interface OfferedTool {
  type?: string;
  name?: string;
  tools?: Array<{ name?: string }>;
}

/** Calls `tool` (e.g. `notes__write_note`) of the MCP server Codex names `namespace` (`mcp__<server>`). */
export async function startScriptedModel(target: {
  namespace: string;
  tool: string;
}): Promise<ScriptedModel> {
  const exchanges: ModelExchange[] = [];
  let responses = 0;
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      if (req.method !== "POST" || !req.url?.endsWith("/responses")) {
        res
          .writeHead(404, { "content-type": "text/plain" })
          .end("the scripted model serves POST /v1/responses");
        return;
      }
      responses += 1;
      const id = `resp-${responses}`;
      const request = JSON.parse(body) as { input?: InputItem[]; tools?: OfferedTool[] };
      const offered = (request.tools ?? [])
        .filter((tool) => tool.type === "namespace" && tool.name === target.namespace)
        .flatMap((tool) => (tool.tools ?? []).map((inner) => `${tool.name}/${inner.name}`));
      const last = request.input?.at(-1) ?? {};
      const item = nextItem(last, offered.includes(`${target.namespace}/${target.tool}`), target, responses);
      exchanges.push({ offered, answering: summarizeInput(last), replied: summarizeOutput(item) });
      const events = [
        { type: "response.created", response: { id } },
        { type: "response.output_item.done", item },
        { type: "response.completed", response: { id, usage: NO_USAGE } },
      ];
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    exchanges,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const NO_USAGE = {
  input_tokens: 0,
  input_tokens_details: null,
  output_tokens: 0,
  output_tokens_details: null,
  total_tokens: 0,
};

function nextItem(
  last: InputItem,
  offered: boolean,
  target: { namespace: string; tool: string },
  n: number,
): Record<string, unknown> {
  if (last.type === "function_call_output")
    return message(n, `The note tool answered: ${outputText(last.output)}`);
  if (!offered) return message(n, `I was not offered ${target.namespace}/${target.tool}.`);
  return {
    type: "function_call",
    call_id: `call-${n}`,
    namespace: target.namespace,
    name: target.tool,
    arguments: JSON.stringify({ text: inputText(last) }),
  };
}

function message(n: number, text: string): Record<string, unknown> {
  return { type: "message", role: "assistant", id: `msg-${n}`, content: [{ type: "output_text", text }] };
}

function inputText(item: InputItem): string {
  if (typeof item.content === "string") return item.content;
  return (item.content ?? []).map((part) => part.text ?? "").join("");
}

/** A function_call_output's `output`: a string, or content items whose texts are joined. */
function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (!Array.isArray(output)) return JSON.stringify(output);
  return output
    .map((part) =>
      part && typeof part === "object" && "text" in part ? String(part.text) : JSON.stringify(part),
    )
    .join(" | ");
}

function summarizeInput(item: InputItem): string {
  if (item.type === "function_call_output") return `function_call_output: ${outputText(item.output)}`;
  return `${item.role ?? item.type ?? "item"} message: ${JSON.stringify(inputText(item))}`;
}

function summarizeOutput(item: Record<string, unknown>): string {
  if (item.type === "function_call") return `function_call ${item.namespace}/${item.name} ${item.arguments}`;
  return `assistant message: ${JSON.stringify(inputText(item as InputItem))}`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}
