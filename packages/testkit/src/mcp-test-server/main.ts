/**
 * The MCP test server process:
 * `main.ts --script <path> [--call-log <path>] [--cancel-log <path>] [--read-log <path>] [--http [--port N] [--header-log <path>] [--era 2026-07-28]]`.
 * Over stdio it serves one session; with --http it serves sessions at 127.0.0.1 and prints
 * `LISTENING <url>` on stdout once ready. Everything else goes to stderr.
 */
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { serveHttp } from "./http.js";
import { serveModernHttp } from "./modern-http.js";

/** The revision `--era` serves alone. */
const MODERN = "2026-07-28";

import { scriptChanges } from "./listing.js";
import { log, ScriptSource } from "./script-source.js";
import { createSession, type TestSession } from "./session.js";

const USAGE =
  "usage: main.ts --script <path> [--call-log <path>] [--cancel-log <path>] [--read-log <path>] [--http [--port N] [--header-log <path>] [--era 2026-07-28]]";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      script: { type: "string" },
      "call-log": { type: "string" },
      "cancel-log": { type: "string" },
      "read-log": { type: "string" },
      "header-log": { type: "string" },
      http: { type: "boolean", default: false },
      era: { type: "string" },
      port: { type: "string", default: "0" },
    },
  });
  if (!values.script) throw new Error(`--script is required. ${USAGE}`);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be an integer from 0 to 65535, got ${values.port}. ${USAGE}`);

  const sessions = new Set<TestSession>();
  const source = new ScriptSource(values.script, (before, after) => {
    const changes = scriptChanges(before, after);
    log(
      `script changed (tools: ${changes.tools}, resources: ${changes.resources}, prompts: ${changes.prompts})`,
    );
    for (const session of sessions) void session.notify(changes);
  });
  source.watch();
  const newSession = () => {
    const session = createSession({
      script: () => source.script,
      callLogPath: values["call-log"],
      cancelLogPath: values["cancel-log"],
      readLogPath: values["read-log"],
    });
    sessions.add(session);
    session.server.onclose = () => sessions.delete(session);
    return session;
  };

  if (values.era !== undefined && (values.era !== MODERN || !values.http)) {
    throw new Error(`--era takes ${MODERN}, with --http. ${USAGE}`);
  }
  if (values.http) {
    const host =
      values.era === MODERN
        ? await serveModernHttp(port, () => source.script, {
            callLogPath: values["call-log"],
            readLogPath: values["read-log"],
            headerLogPath: values["header-log"],
          })
        : await serveHttp(port, newSession, values["header-log"]);
    const stop = async () => {
      source.close();
      await host.close();
      process.exit(0);
    };
    process.once("SIGTERM", () => void stop());
    process.once("SIGINT", () => void stop());
    process.stdout.write(`LISTENING ${host.url}\n`);
    log(`listening at ${host.url}`);
    return;
  }
  const session = newSession();
  const stop = () => {
    source.close();
    process.exit(0);
  };
  // The client ends a stdio session by closing our stdin; exit at once rather than after its kill timeout.
  process.stdin.once("end", stop);
  process.once("SIGTERM", stop);
  await session.connect(new StdioServerTransport());
  log("serving over stdio");
}

main().catch((error: unknown) => {
  log(`failed to start: ${(error as Error).message}`);
  process.exit(1);
});
