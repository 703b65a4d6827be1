/**
 * `toolbus start` in a real terminal: it says what it does while it starts, logs one readable
 * line per event (no JSON; JSON with `--log-format json`), and Ctrl-C stops everything it started
 * and exits 0, quietly, however it was started. Each run is in a pseudo-terminal (util-linux `script`), and Ctrl-C is
 * the byte a keyboard sends: the terminal delivers SIGINT to the whole foreground group (pnpm,
 * the CLI, a pipe's other end) and pnpm forwards it again, as it does for a user. Before the fix,
 * `pnpm exec toolbus start` took the forwarded copy for a second Ctrl-C and exited 130 leaving
 * its nats-server running, and `… | tee log` died of EPIPE when `tee` went first.
 * (`pnpm start` itself, as the README runs it, is checked in readme-commands.test.ts.)
 */
import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withPgSchema } from "@toolbus/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { EVERYTHING, ROOT, until } from "./support/pnpm-start.js";

/** Processes whose working directory is `dir` (the stdio servers toolbus started there). */
function processesIn(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === dir) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

/** nats-servers whose command line names a file under `dir`. */
function natsServersUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
      if (args[0]?.endsWith("nats-server") && args.some((arg) => arg.startsWith(dir)))
        pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

interface TerminalRun {
  code: number | null;
  output: string;
}

/**
 * Runs `command` through bash in a pseudo-terminal, presses Ctrl-C once `ready` is printed, and
 * resolves when the terminal's session ends.
 */
function runAndInterrupt(
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  ready: string,
): Promise<TerminalRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("script", ["--quiet", "--flush", "--return", "--command", command, "/dev/null"], {
      cwd,
      env: { ...env, SHELL: "/bin/bash" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let output = "";
    let pressed = false;
    const onOutput = (chunk: Buffer) => {
      output += chunk.toString();
      if (!pressed && output.includes(ready)) {
        pressed = true;
        // A moment later, as a person would: the banner is printed before the last log lines.
        setTimeout(() => child.stdin.write("\x03"), 500);
      }
    };
    child.stdout.on("data", onOutput);
    child.stderr.on("data", onOutput);
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`\`${command}\` did not end within 150 s:\n${output.slice(-3_000)}`));
    }, 150_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

describe("Ctrl-C in a terminal", () => {
  const folder = mkdtempSync(join(tmpdir(), "toolbus-ctrl-c-"));
  const serverDir = join(folder, "server-cwd");
  const drops: Array<() => Promise<void>> = [];
  mkdirSync(serverDir);
  // `pnpm exec toolbus` in a project of the user's: the CLI's launcher on the PATH pnpm gives.
  mkdirSync(join(folder, "node_modules/.bin"), { recursive: true });
  symlinkSync(join(ROOT, "packages/cli/bin/toolbus.js"), join(folder, "node_modules/.bin/toolbus"));
  writeFileSync(join(folder, "package.json"), '{ "name": "my-agents", "private": true }\n');
  writeFileSync(
    join(folder, "toolbus.toml"),
    [
      "[mcp_servers.everything]",
      `command = ${JSON.stringify(process.execPath)}`,
      `args = [${JSON.stringify(EVERYTHING)}, "stdio"]`,
      `cwd = ${JSON.stringify(serverDir)}`,
      "",
    ].join("\n"),
  );

  afterAll(async () => {
    for (const pid of [...processesIn(serverDir), ...natsServersUnder(folder)]) process.kill(pid, "SIGKILL");
    for (const drop of drops) await drop();
    rmSync(folder, { recursive: true, force: true });
  });

  async function environment(): Promise<NodeJS.ProcessEnv> {
    const schema = await withPgSchema(process.env.DATABASE_URL!, "ctrlc");
    drops.push(() => schema.drop());
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TOOLBUS_HTTP_PORT: "0",
      DATABASE_URL: schema.url,
      XDG_STATE_HOME: join(folder, "state"),
      LOG_LEVEL: "warn",
      NO_COLOR: "1",
    };
    // Its own nats-server, as a user's first start has.
    for (const name of [
      "NATS_URL",
      "NATS_NKEY_FILE",
      "NATS_IDENTITIES_DIR",
      "TOOLBUS_CONFIG",
      "NODE_OPTIONS",
    ])
      delete env[name];
    return env;
  }

  it("logs for people: no JSON line, a stdio server's stderr as it wrote it, and the steps of the start", async () => {
    const ran = await runAndInterrupt(
      "pnpm exec toolbus start --config toolbus.toml",
      folder,
      { ...(await environment()), LOG_LEVEL: "info" },
      "  Postgres ",
    );
    const lines = ran.output.replace(/\r/g, "").split("\n");
    expect(
      lines.filter((line) => line.trim().startsWith("{")),
      ran.output,
    ).toEqual([]);
    expect(
      lines.some((line) => /^\[\d\d:\d\d:\d\d\] INFO: gateway: gateway ready/.test(line)),
      ran.output,
    ).toBe(true);
    // server-everything's own stderr line, after the server's name.
    expect(ran.output).toContain("everything ▸ Starting default (STDIO) server...");
    const said = (text: string) => ran.output.indexOf(text);
    expect(said("starting its own NATS")).toBeGreaterThanOrEqual(0);
    expect(said("starting toolbus's services and 1 MCP server(s): everything…")).toBeGreaterThan(
      said("starting its own NATS"),
    );
    expect(said("toolbus is running")).toBeGreaterThan(said("starting toolbus's services"));
    expect(ran.code).toBe(0);
  }, 180_000);

  it("logs JSON lines with --log-format json, on a terminal too", async () => {
    const ran = await runAndInterrupt(
      "pnpm exec toolbus start --config toolbus.toml --log-format json",
      folder,
      { ...(await environment()), LOG_LEVEL: "info" },
      "  Postgres ",
    );
    const json = ran.output
      .replace(/\r/g, "")
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as { msg: string; service: string });
    expect(json).toContainEqual(expect.objectContaining({ service: "gateway", msg: "gateway ready" }));
    expect(ran.code).toBe(0);
  }, 180_000);

  it("refuses a --log-format it does not know, saying which there are", async () => {
    const ran = await runAndInterrupt(
      "pnpm exec toolbus start --config toolbus.toml --log-format yaml",
      folder,
      await environment(),
      "never printed",
    );
    expect(ran.code).toBe(2);
    expect(ran.output).toContain("--log-format=yaml is not a log format; use pretty or json");
    expect(ran.output).toContain("Usage: toolbus start");
  }, 180_000);

  /** What it printed after it began to stop: nothing is what a user should see. */
  const afterStopping = (output: string) => output.split("stopping toolbus…")[1]?.replace(/\r/g, "").trim();

  it("stops `pnpm exec toolbus start` cleanly: exit 0, nothing printed, no process left", async () => {
    const ran = await runAndInterrupt(
      "pnpm exec toolbus start --config toolbus.toml",
      folder,
      await environment(),
      "  Postgres ",
    );
    expect(ran.output).toContain("toolbus is running (1 server(s) ready, 0 failed)");
    expect({ code: ran.code, after: afterStopping(ran.output) }, ran.output).toEqual({ code: 0, after: "" });
    await until(() => processesIn(serverDir).length === 0, "the stdio server to end", 10_000);
    expect(natsServersUnder(folder)).toEqual([]);
  }, 180_000);

  it("stops `pnpm exec toolbus start 2>&1 | tee log` cleanly when tee goes first", async () => {
    const ran = await runAndInterrupt(
      `pnpm exec toolbus start --config toolbus.toml 2>&1 | tee toolbus.log; exit \${PIPESTATUS[0]}`,
      folder,
      await environment(),
      "  Postgres ",
    );
    expect(ran.output).toContain("toolbus is running (1 server(s) ready, 0 failed)");
    expect(ran.code, ran.output).toBe(0);
    await until(() => processesIn(serverDir).length === 0, "the stdio server to end", 10_000);
    expect(natsServersUnder(folder)).toEqual([]);
  }, 180_000);
});
