/**
 * A nats-server of a test's own, from a config the test writes (authorization, limits): on a free
 * loopback port, JetStream on, its log kept so a test can read what the server refused.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { acceptsConnections, freePort } from "@toolbus/config";

export interface NatsServerProcess {
  url: string;
  port: number;
  /** The server's process (a benchmark reads its CPU time from /proc). */
  pid: number | undefined;
  /** Everything the server logged so far, one line each. */
  logLines(): string[];
  /** The lines where the server refused a publish or subscription ("Permissions Violation"). */
  violations(): string[];
  stop(): Promise<void>;
}

const BINARIES = [
  "/usr/sbin/nats-server",
  "/usr/bin/nats-server",
  "/usr/local/bin/nats-server",
  "/opt/homebrew/bin/nats-server",
];

/** The 2.10 nats-server `scripts/setup.sh --tests` fetches where the machine's is older. */
const FETCHED_BINARY = fileURLToPath(new URL("../../../.toolbus/bin/nats-server", import.meta.url));

export interface NatsServerBinary {
  path: string;
  /** `2.10.27` */
  version: string;
}

/**
 * Every distinct nats-server this machine has (`TOOLBUS_NATS_SERVER`, the fetched 2.10, the
 * system's), one per version: a security test runs against each of them.
 */
export function natsServerBinaries(): NatsServerBinary[] {
  const found = new Map<string, NatsServerBinary>();
  for (const path of [process.env.TOOLBUS_NATS_SERVER, FETCHED_BINARY, ...BINARIES]) {
    if (!path || !existsSync(path)) continue;
    const printed = execFileSync(path, ["--version"], { encoding: "utf8" });
    const version = /v(\d+\.\d+\.\d+)/.exec(printed)?.[1];
    if (version !== undefined && !found.has(version)) found.set(version, { path, version });
  }
  return [...found.values()];
}

/** `config` is appended to a base that sets the port, JetStream and its store. */
export async function startNatsServer(
  options: { config?: string; maxPayload?: number; binary?: string } = {},
): Promise<NatsServerProcess> {
  const binary = options.binary ?? BINARIES.find((candidate) => existsSync(candidate));
  if (!binary)
    throw new Error(
      `nats-server not found (looked in ${BINARIES.join(", ")}); run \`bash scripts/setup.sh\``,
    );
  const dir = mkdtempSync(join(tmpdir(), "toolbus-nats-"));
  const port = await freePort();
  const conf = join(dir, "nats.conf");
  writeFileSync(
    conf,
    [
      `listen: "127.0.0.1:${port}"`,
      `jetstream { store_dir: ${JSON.stringify(join(dir, "js"))}, max_memory_store: 1GB, max_file_store: 64GB }`,
      ...(options.maxPayload ? [`max_payload: ${options.maxPayload}`] : []),
      options.config ?? "",
    ].join("\n"),
  );
  const lines: string[] = [];
  const child = spawn(binary, ["-c", conf], { stdio: ["ignore", "ignore", "pipe"] });
  let partial = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    const parts = (partial + chunk).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
  });
  const url = `nats://127.0.0.1:${port}`;
  await waitForPort(port, child, lines);
  return {
    url,
    port,
    pid: child.pid,
    logLines: () => [...lines],
    violations: () => lines.filter((line) => line.includes("Violation")),
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPort(port: number, child: ChildProcess, lines: string[]): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`nats-server exited with code ${child.exitCode}: ${lines.slice(-5).join(" | ")}`);
    }
    if (await acceptsConnections("127.0.0.1", port)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nats-server did not answer on port ${port} within 15 s`);
}
