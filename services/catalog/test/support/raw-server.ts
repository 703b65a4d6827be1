/** Starts-on-demand handle for raw-mcp-server.mjs: its stdio command, and the requests it received. */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export interface RawServerScript {
  protocolVersion?: string;
  instructions?: string;
  toolPages?: Array<{ cursor?: string; tools: unknown[]; nextCursor?: string }>;
  resourcePages?: Array<{ cursor?: string; resources: unknown[]; nextCursor?: string }>;
  promptPages?: Array<{ cursor?: string; prompts: unknown[]; nextCursor?: string }>;
  /** What prompts/get answers, whatever the prompt. */
  promptResult?: unknown;
}

export interface RawServer {
  command: string;
  args: string[];
  /** The process id of the last server process started with this script. */
  pid(): Promise<number>;
  /** Every message the server received, oldest first. */
  requests(): Promise<Array<{ method: string; params?: Record<string, unknown> }>>;
  dispose(): Promise<void>;
}

export async function rawServer(script: RawServerScript): Promise<RawServer> {
  const dir = await mkdtemp(join(tmpdir(), "toolbus-raw-mcp-"));
  const scriptPath = join(dir, "script.json");
  const logPath = join(dir, "requests.jsonl");
  await writeFile(scriptPath, JSON.stringify(script));
  await writeFile(logPath, "");
  return {
    command: process.execPath,
    args: [fileURLToPath(new URL("./raw-mcp-server.mjs", import.meta.url)), scriptPath, logPath],
    pid: async () => Number(await readFile(`${logPath}.pid`, "utf8")),
    async requests() {
      const text = await readFile(logPath, "utf8");
      return text
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map((line) => JSON.parse(line));
    },
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}
