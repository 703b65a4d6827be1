/**
 * Test-side helpers for the MCP test server: write a script to a fresh control folder, give a
 * client the stdio command (or spawn the HTTP server), change the script atomically and wait
 * until the server applied it, and read the call and read logs. Also the server-everything launchers.
 */
import { readdirSync } from "node:fs";
import { mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { spawnUntilReady } from "./child.js";
import {
  type CallLogLine,
  CallLogLineSchema,
  type CancelLogLine,
  CancelLogLineSchema,
  type HeaderLogLine,
  HeaderLogLineSchema,
  type ReadLogLine,
  ReadLogLineSchema,
  type TestServerScript,
  TestServerScriptSchema,
} from "./script.js";
import { APPLIED_MARKER_INFIX, scriptHash } from "./script-source.js";

export {
  type CallLogLine,
  type CancelLogLine,
  type HeaderLogLine,
  type ParsedTestServerScript,
  type ReadLogLine,
  type ScriptPrompt,
  type ScriptResource,
  type ScriptTool,
  type TestServerScript,
  TestServerScriptSchema,
  type ToolBehavior,
} from "./script.js";
export { serverEverythingCommand, startServerEverythingHttp } from "./server-everything.js";

export interface TestServerBase {
  scriptPath: string;
  callLogPath: string;
  /**
   * Validates and atomically replaces the script, then waits (up to 5 s) until every running
   * server process using it has applied it. Resolves at once when none is running.
   */
  setScript(next: TestServerScript): Promise<void>;
  /** Every tools/call received so far, oldest first. */
  calls(): Promise<CallLogLine[]>;
  /** Every tools/call cancelled while it ran (the client's notifications/cancelled), oldest first. */
  cancellations(): Promise<CancelLogLine[]>;
  /** Every resources/read received so far, oldest first. */
  reads(): Promise<ReadLogLine[]>;
  /** Stops the HTTP server (if any) and deletes the control folder. */
  dispose(): Promise<void>;
}

/** What an MCP client or connector needs to spawn the server over stdio. */
export interface StdioTestServer extends TestServerBase {
  transport: "stdio";
  command: string;
  args: string[];
  env?: Record<string, string>;
}

export interface HttpTestServer extends TestServerBase {
  transport: "http";
  /** The streamable HTTP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** Stops the server process (the control folder stays until dispose()). */
  stop(): Promise<void>;
  /** What the server wrote to stderr (the last 16 KiB). */
  stderr(): string;
  /** The method and headers of every HTTP request the server received, oldest first. */
  requestHeaders(): Promise<HeaderLogLine[]>;
}

export interface StartTestServerOptions {
  script: TestServerScript;
  transport: "stdio" | "http";
  /** Over HTTP: serve MCP 2026-07-28 alone (2025's initialize is refused), as a v2 server may. */
  era?: "2026-07-28";
}

export function startTestServer(
  options: StartTestServerOptions & { transport: "stdio" },
): Promise<StdioTestServer>;
export function startTestServer(
  options: StartTestServerOptions & { transport: "http" },
): Promise<HttpTestServer>;
export function startTestServer(options: StartTestServerOptions): Promise<StdioTestServer | HttpTestServer>;
export async function startTestServer(
  options: StartTestServerOptions,
): Promise<StdioTestServer | HttpTestServer> {
  const dir = await mkdtemp(join(tmpdir(), "toolbus-mcp-test-"));
  const scriptPath = join(dir, "script.json");
  const callLogPath = join(dir, "calls.jsonl");
  const cancelLogPath = join(dir, "cancellations.jsonl");
  const readLogPath = join(dir, "reads.jsonl");
  const headerLogPath = join(dir, "headers.jsonl");
  await writeScript(scriptPath, options.script);
  await writeFile(callLogPath, "");
  const { command, args } = testServerCommand(scriptPath, { callLogPath, cancelLogPath, readLogPath });
  const base = {
    scriptPath,
    callLogPath,
    setScript: async (next: TestServerScript) => {
      const text = await writeScript(scriptPath, next);
      await waitApplied(scriptPath, scriptHash(text));
    },
    calls: () => readLog(callLogPath, CallLogLineSchema),
    cancellations: () => readLog(cancelLogPath, CancelLogLineSchema),
    reads: () => readLog(readLogPath, ReadLogLineSchema),
  };
  const removeDir = () => rm(dir, { recursive: true, force: true });
  if (options.transport === "stdio")
    return { ...base, transport: "stdio", command, args, dispose: removeDir };

  const child = await spawnUntilReady({
    command,
    args: [
      ...args,
      "--http",
      "--header-log",
      headerLogPath,
      ...(options.era === undefined ? [] : ["--era", options.era]),
    ],
    readyPattern: /^LISTENING (\S+)$/,
    what: "the MCP test server",
  });
  return {
    ...base,
    transport: "http",
    url: child.ready,
    stop: child.stop,
    stderr: child.stderr,
    requestHeaders: () => readLog(headerLogPath, HeaderLogLineSchema),
    dispose: async () => {
      await child.stop();
      await removeDir();
    },
  };
}

/** Runs the server from source through tsx when this file is the source, else from dist. */
function testServerCommand(
  scriptPath: string,
  logs: { callLogPath: string; cancelLogPath: string; readLogPath: string },
): { command: string; args: string[] } {
  const fromSource = import.meta.url.endsWith(".ts");
  const main = fileURLToPath(new URL(fromSource ? "./main.ts" : "./main.js", import.meta.url));
  const loader = fromSource
    ? [
        "--conditions=@toolbus/source",
        "--import",
        pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href,
      ]
    : [];
  return {
    command: process.execPath,
    args: [
      ...loader,
      main,
      "--script",
      scriptPath,
      "--call-log",
      logs.callLogPath,
      "--cancel-log",
      logs.cancelLogPath,
      "--read-log",
      logs.readLogPath,
    ],
  };
}

/** Validates, then writes to a temp file and renames it over the script: readers never see half a file. */
async function writeScript(scriptPath: string, script: TestServerScript): Promise<string> {
  TestServerScriptSchema.parse(script);
  const text = JSON.stringify(script, null, 2);
  const temp = `${scriptPath}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temp, text);
  await rename(temp, scriptPath);
  return text;
}

const APPLY_TIMEOUT_MS = 5_000;

async function waitApplied(scriptPath: string, hash: string): Promise<void> {
  const dir = dirname(scriptPath);
  const markerPrefix = `${basename(scriptPath)}${APPLIED_MARKER_INFIX}`;
  const deadline = Date.now() + APPLY_TIMEOUT_MS;
  for (;;) {
    const pending: number[] = [];
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(markerPrefix)) continue;
      const pid = Number(name.slice(markerPrefix.length));
      if (!Number.isInteger(pid) || !isAlive(pid)) continue;
      const applied = await readFile(join(dir, name), "utf8").catch(() => hash);
      if (applied !== hash) pending.push(pid);
    }
    if (pending.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(
        `the MCP test server (pid ${pending.join(", ")}) did not apply the new script within ${APPLY_TIMEOUT_MS} ms; check its stderr`,
      );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function readLog<T>(path: string, schema: { parse(value: unknown): T }): Promise<T[]> {
  const text = await readFile(path, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => schema.parse(JSON.parse(line)));
}
