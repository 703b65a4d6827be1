/**
 * A model endpoint on loopback that speaks the Anthropic Messages API as Claude Code streams it
 * (`POST /v1/messages`, Server-Sent Events: `message_start`, `content_block_start`,
 * `content_block_delta`, `content_block_stop`, `message_delta`, `message_stop`), with a script
 * instead of a model: a conversation whose last message is the user's prompt is answered with a
 * call of the one tool it is told to call, if Claude Code offers it; a tool result is answered
 * with a message quoting it. Requests that offer no tools (Claude Code's side questions, such as
 * a title for the session) get a short text. Every exchange is kept for the test to read.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface MessagesExchange {
  /** The names of the tools the request offered. */
  offered: string[];
  /** The text of every tool_result block in the request's last message. */
  toolResults: string[];
  /** What the scripted model answered: `tool_use <name>` or `text <text>`. */
  replied: string;
}

export interface ScriptedMessagesApi {
  /** `ANTHROPIC_BASE_URL` for Claude Code. */
  baseUrl: string;
  exchanges: MessagesExchange[];
  close(): Promise<void>;
}

type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown }
  | { type: "tool_result"; tool_use_id?: string; content?: string | Array<{ type?: string; text?: string }> }
  | { type: string };

interface MessagesRequest {
  stream?: boolean;
  model?: string;
  tools?: Array<{ name?: string }>;
  messages?: Array<{ role?: string; content?: string | Block[] }>;
}

const MAX_BODY = 8 * 1024 * 1024;

/** Answers the prompt with a call of `tool` (as Claude Code names it) with `input`. */
export async function startScriptedMessagesApi(target: {
  tool: string;
  input: Record<string, unknown>;
}): Promise<ScriptedMessagesApi> {
  const exchanges: MessagesExchange[] = [];
  let answers = 0;
  const server: Server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const path = (req.url ?? "").split("?")[0];
      if (req.method !== "POST" || path !== "/v1/messages") {
        // Anything else Claude Code asks (a token count, a check) is not part of the script.
        res.writeHead(404, { "content-type": "application/json" }).end(
          JSON.stringify({
            type: "error",
            error: { type: "not_found_error", message: "the scripted API serves POST /v1/messages" },
          }),
        );
        return;
      }
      answers += 1;
      const request = JSON.parse(body) as MessagesRequest;
      const offered = (request.tools ?? []).map((tool) => tool.name ?? "");
      const last = request.messages?.at(-1);
      const blocks: Block[] = typeof last?.content === "string" ? [] : (last?.content ?? []);
      const toolResults = blocks
        .filter((block): block is Extract<Block, { type: "tool_result" }> => block.type === "tool_result")
        .map((block) =>
          typeof block.content === "string"
            ? block.content
            : (block.content ?? []).map((part) => part.text ?? "").join(""),
        );
      let answer: Block;
      if (toolResults.length > 0) answer = { type: "text", text: `The tool said: ${toolResults.join(" ")}` };
      else if (offered.includes(target.tool))
        answer = {
          type: "tool_use",
          id: `toolu_scripted_${answers}`,
          name: target.tool,
          input: target.input,
        };
      else answer = { type: "text", text: "toolbus" };
      exchanges.push({
        offered,
        toolResults,
        replied:
          answer.type === "tool_use"
            ? `tool_use ${target.tool}`
            : `text ${(answer as { text: string }).text}`,
      });
      const message = {
        id: `msg_scripted_${answers}`,
        type: "message",
        role: "assistant",
        model: request.model ?? "scripted",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      };
      const stopReason = answer.type === "tool_use" ? "tool_use" : "end_turn";
      if (request.stream !== true) {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ ...message, content: [answer], stop_reason: stopReason }));
        return;
      }
      const events: Array<Record<string, unknown>> = [
        { type: "message_start", message: { ...message, content: [], stop_reason: null } },
        answer.type === "tool_use"
          ? {
              type: "content_block_start",
              index: 0,
              content_block: {
                type: "tool_use",
                id: (answer as { id: string }).id,
                name: target.tool,
                input: {},
              },
            }
          : { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        answer.type === "tool_use"
          ? {
              type: "content_block_delta",
              index: 0,
              delta: { type: "input_json_delta", partial_json: JSON.stringify(target.input) },
            }
          : {
              type: "content_block_delta",
              index: 0,
              delta: { type: "text_delta", text: (answer as { text: string }).text },
            },
        { type: "content_block_stop", index: 0 },
        {
          type: "message_delta",
          delta: { stop_reason: stopReason, stop_sequence: null },
          usage: { output_tokens: 1 },
        },
        { type: "message_stop" },
      ];
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    exchanges,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = "";
    req.on("data", (chunk: Buffer) => {
      body += chunk.toString();
      if (body.length > MAX_BODY) req.destroy(new Error("request body over 8 MiB"));
    });
    req.on("end", () => resolve(body));
    req.on("error", reject);
  });
}
