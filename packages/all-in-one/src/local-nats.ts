/**
 * NATS for the all-in-one process: the one at NATS_URL (or 127.0.0.1:4222) when it answers,
 * else a `nats-server -js` started here with its data under the project, else a message
 * that says how to get one.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { connect } from "node:net";
import { delimiter, join } from "node:path";
import { maskUrl } from "@toolbus/bus";
import { SetupError } from "./setup-error.js";

export interface LocalNats {
  url: string;
  /** True when this process started the server (and will stop it). */
  started: boolean;
  stop(): Promise<void>;
}

export async function ensureNats(options: {
  url?: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
}): Promise<LocalNats> {
  const url = options.url ?? "nats://127.0.0.1:4222";
  if (await answers(url)) return { url, started: false, stop: async () => {} };
  const { hostname, port } = new URL(url);
  if (options.url !== undefined || !["127.0.0.1", "localhost"].includes(hostname)) {
    throw new SetupError(
      `NATS is not reachable at ${maskUrl(url)}. Start it (nats-server -js) or fix NATS_URL.`,
    );
  }
  const binary = findOnPath("nats-server", options.env);
  if (!binary) {
    throw new SetupError(
      `NATS is not running at ${maskUrl(url)} and nats-server is not installed. Install it ` +
        "(Debian/Ubuntu: apt-get install nats-server; macOS: brew install nats-server; or see https://nats.io/download), " +
        "or point NATS_URL at a running server with JetStream.",
    );
  }
  mkdirSync(options.dataDir, { recursive: true });
  const child = spawn(binary, ["-a", "127.0.0.1", "-p", port || "4222", "-js", "-sd", options.dataDir], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  await waitUntilAnswering(url, child);
  return {
    url,
    started: true,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

function findOnPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = [...(env.PATH ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin"];
  return dirs.map((dir) => join(dir, name)).find((candidate) => existsSync(candidate));
}

async function waitUntilAnswering(url: string, child: ChildProcess): Promise<void> {
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2000);
  });
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null)
      throw new SetupError(`nats-server exited (code ${child.exitCode}): ${stderr.trim()}`);
    if (await answers(url)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new SetupError(`nats-server did not answer at ${maskUrl(url)} within 10 s: ${stderr.trim()}`);
}

export function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 4222) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
