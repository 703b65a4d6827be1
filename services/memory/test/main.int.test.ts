// The memory service as a process (src/main.ts): its settings come from the [memory] table of
// the config file it is given, and a bad table or option stops it with a message naming the
// problem, before it touches the bus or Postgres.
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterEach, expect, it } from "vitest";

const MAIN = fileURLToPath(new URL("../src/main.ts", import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Runs the service with a config file holding `toml`; resolves with its exit code and stderr. */
async function runMemory(
  toml: string,
  extraArgs: string[] = [],
): Promise<{ code: number | null; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), "toolbus-memory-main-"));
  dirs.push(dir);
  const configPath = join(dir, "toolbus.toml");
  await writeFile(configPath, toml);
  const child = spawn(
    process.execPath,
    ["--conditions=@toolbus/source", "--import", TSX, MAIN, "--config", configPath, ...extraArgs],
    {
      // Unreachable on purpose: a config problem must be reported before anything is connected.
      env: { ...process.env, NATS_URL: "nats://127.0.0.1:1", DATABASE_URL: "postgres://x@127.0.0.1:1/none" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  return { code, stderr };
}

it("stops with the file, key and rule when the [memory] table is wrong", async () => {
  const { code, stderr } = await runMemory("[memory]\nbatch_size = 0\n");
  expect(code).toBe(1);
  expect(stderr).toContain("memory.batch_size: must be from 1 to 10000");
  expect(stderr).toContain("toolbus.toml");
});

it("names the options it accepts when given one it does not know", async () => {
  const { code, stderr } = await runMemory("", ["--port", "1"]);
  expect(code).toBe(1);
  expect(stderr).toContain("accepted: --config <path>");
});
