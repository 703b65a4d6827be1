/** Running command hooks as real `sh -c` processes: input, output, exit codes, caps, timeouts. */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HookPayload } from "@toolbus/policy";
import { describe, expect, it } from "vitest";
import { HOOK_OUTPUT_CAP_BYTES } from "../../../src/adapters/hooks/bounded-text.js";
import { runCommandHook } from "../../../src/adapters/hooks/command-hook.js";

const payload: HookPayload = {
  session_id: "thread-1",
  hook_event_name: "PreToolUse",
  tool_name: "mcp__docs__search",
  tool_input: { q: "x" },
  tool_use_id: "call-1",
};

const hook = (command: string, timeout?: number) => ({
  type: "command" as const,
  command,
  ...(timeout === undefined ? {} : { timeout }),
});

describe("command hooks", () => {
  it("get the payload on stdin and report stdout, stderr and the exit code", async () => {
    await expect(runCommandHook(hook("cat; echo oops >&2; exit 3"), payload)).resolves.toEqual({
      hookLabel: "cat; echo oops >&2; exit 3",
      exitCode: 3,
      stdout: JSON.stringify(payload),
      stderr: "oops\n",
      timedOut: false,
      crashed: false,
      timeoutMs: 600_000,
    });
  });

  it("may exit without reading their input", async () => {
    await expect(
      runCommandHook(hook("exit 0"), { ...payload, tool_input: { big: "x".repeat(1_000_000) } }),
    ).resolves.toMatchObject({
      exitCode: 0,
      crashed: false,
    });
  });

  it("keep at most 1 MiB of output and say how much was dropped", async () => {
    const run = await runCommandHook(hook("head -c 1500000 /dev/zero | tr '\\0' a"), payload);
    expect({
      exitCode: run.exitCode,
      head: run.stdout.slice(0, HOOK_OUTPUT_CAP_BYTES),
      tail: run.stdout.slice(HOOK_OUTPUT_CAP_BYTES),
    }).toEqual({
      exitCode: 0,
      head: "a".repeat(HOOK_OUTPUT_CAP_BYTES),
      tail: `\n[… ${1_500_000 - HOOK_OUTPUT_CAP_BYTES} more bytes dropped by toolbus]`,
    });
  });

  it("are killed with everything they started when their timeout passes", async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolbus-kill-"));
    const pidFile = join(dir, "child.pid");
    // The child outlives the test's timeout: a runner that waited for it fails the test, no clock needed.
    const run = await runCommandHook(hook(`sleep 120 & echo $! > ${pidFile}; wait`, 0.3), payload);
    expect(run).toEqual({
      hookLabel: `sleep 120 & echo $! > ${pidFile}; wait`,
      exitCode: null,
      stdout: "",
      stderr: "",
      timedOut: true,
      crashed: false,
      timeoutMs: 300,
    });
    const child = Number((await readFile(pidFile, "utf8")).trim());
    await expect.poll(() => isRunning(child)).toBe(false);
  });

  it("see only the allow-listed environment: no database URL, NATS credentials, tokens or OTLP headers", async () => {
    const dir = await mkdtemp(join(tmpdir(), "toolbus-hook-env-"));
    const serviceEnv = {
      PATH: process.env.PATH,
      HOME: "/home/toolbus",
      LANG: "C.UTF-8",
      LC_CTYPE: "C.UTF-8",
      TZ: "UTC",
      DATABASE_URL: "postgres://app:db-sentinel@db/toolbus",
      NATS_URL: "nats://svc:nats-sentinel@nats:4222",
      NATS_PASSWORD: "nats-sentinel",
      NATS_CREDS: "/run/secrets/nats.creds",
      TOOLBUS_TOKENS: "gateway-sentinel",
      GITHUB_TOKEN: "ghp_sentinel",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer otel-sentinel",
      AWS_SECRET_ACCESS_KEY: "aws-sentinel",
    };
    const run = await runCommandHook(hook("env"), payload, { env: serviceEnv, cwd: dir });
    const seen = Object.fromEntries(
      run.stdout
        .trim()
        .split("\n")
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
    // The shell sets these itself.
    for (const own of ["PWD", "OLDPWD", "SHLVL", "_"]) delete seen[own];
    expect(seen).toEqual({
      PATH: process.env.PATH,
      HOME: "/home/toolbus",
      LANG: "C.UTF-8",
      LC_CTYPE: "C.UTF-8",
      TZ: "UTC",
      CLAUDE_PROJECT_DIR: dir,
    });
    expect(run.stdout).not.toContain("sentinel");
  });

  it("report a hook stopped by the service as crashed", async () => {
    const abort = new AbortController();
    const running = runCommandHook(hook("sleep 30"), payload, { signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    await expect(running).resolves.toMatchObject({
      exitCode: null,
      timedOut: false,
      crashed: true,
      error: "the approvals service stopped before the hook finished",
    });
  });
});

/** Alive and not a zombie (a container's init may never reap the orphan). */
async function isRunning(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}
