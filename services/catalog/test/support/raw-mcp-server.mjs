// A hand-written MCP server over stdio (no SDK), for what an SDK server will not do: answer
// `initialize` with an older protocol version, list pages exactly as scripted, and report the
// environment it was started with. Usage: node raw-mcp-server.mjs <script.json> <requests.jsonl>
// The script: {protocolVersion?, instructions?, toolPages?: [{cursor?, tools, nextCursor?}],
// resourcePages?: [{cursor?, resources, nextCursor?}], promptPages?: [{cursor?, prompts,
// nextCursor?}], promptResult?: <what prompts/get answers>}. Every request is appended to the
// log, and the process id is written next to it (`<log>.pid`).
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";

const [scriptPath, logPath] = process.argv.slice(2);
const script = JSON.parse(readFileSync(scriptPath, "utf8"));
writeFileSync(`${logPath}.pid`, String(process.pid));

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);

function page(pages, key, cursor) {
  const found = (pages ?? [{ [key]: [] }]).find((p) => p.cursor === cursor);
  if (!found) return { error: { code: -32602, message: `Invalid cursor: ${cursor}` } };
  return {
    result: {
      [key]: found[key],
      ...(found.nextCursor === undefined ? {} : { nextCursor: found.nextCursor }),
    },
  };
}

function answer(request) {
  const params = request.params ?? {};
  switch (request.method) {
    case "initialize":
      return {
        result: {
          protocolVersion: script.protocolVersion ?? params.protocolVersion,
          capabilities: {
            tools: {},
            ...(script.resourcePages ? { resources: {} } : {}),
            ...(script.promptPages ? { prompts: {} } : {}),
          },
          serverInfo: { name: "raw-mcp-server", version: "0.0.1" },
          ...(script.instructions === undefined ? {} : { instructions: script.instructions }),
        },
      };
    case "ping":
      return { result: {} };
    case "tools/list":
      return page(script.toolPages, "tools", params.cursor);
    case "resources/list":
      return page(script.resourcePages, "resources", params.cursor);
    case "prompts/list":
      return page(script.promptPages, "prompts", params.cursor);
    case "prompts/get":
      return { result: script.promptResult ?? { messages: [] } };
    case "tools/call":
      if (params.name === "env") {
        return { result: { content: [{ type: "text", text: JSON.stringify(process.env) }] } };
      }
      return { error: { code: -32602, message: `Unknown tool: ${params.name}` } };
    default:
      return { error: { code: -32601, message: `Method not found: ${request.method}` } };
  }
}

createInterface({ input: process.stdin }).on("line", (line) => {
  if (!line.trim()) return;
  const message = JSON.parse(line);
  appendFileSync(logPath, `${JSON.stringify({ method: message.method, params: message.params })}\n`);
  if (message.id === undefined || message.method === undefined) return;
  send({ id: message.id, ...answer(message) });
});
process.stdin.on("end", () => process.exit(0));
