/**
 * toolbus services as child processes built from source (`node --conditions=@toolbus/source
 * --import tsx services/<name>/src/main.ts`): started with a prefix, a NATS URL and a config
 * file, ready once they log their ready line, stopped with SIGTERM. (A nats-server of a test's
 * own, with another max_payload: `startThrowawayNats` in @toolbus/testkit.)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

export interface ServiceProcess {
  readonly child: ChildProcess;
  /** Every JSON log line the process printed, parsed; other lines as `{raw}`. */
  readonly logs: Array<Record<string, unknown>>;
  /** SIGTERM, SIGKILL after 5 s; resolves with the exit code once it is gone. */
  stop(): Promise<number | null>;
}

export interface StartServiceOptions {
  service: "catalog" | "dispatcher" | "approvals";
  prefix: string;
  natsUrl: string;
  configPath: string;
  env?: Record<string, string>;
  /** More command-line arguments, e.g. `--port 0`. */
  args?: readonly string[];
  /** The `msg` of the log line that says the service is ready (a pattern: the start of it). */
  readyMessage: string | RegExp;
  timeoutMs?: number;
}

export function startServiceProcess(options: StartServiceOptions): Promise<ServiceProcess> {
  const { service, readyMessage, timeoutMs = 60_000 } = options;
  const child = spawn(
    process.execPath,
    [
      "--conditions=@toolbus/source",
      "--import",
      "tsx",
      join(REPO_ROOT, "services", service, "src", "main.ts"),
      "--config",
      options.configPath,
      ...(options.args ?? []),
    ],
    {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        NATS_URL: options.natsUrl,
        TOOLBUS_PREFIX: options.prefix,
        LOG_LEVEL: "info",
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const logs: Array<Record<string, unknown>> = [];
  const stop = async (): Promise<number | null> => {
    if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    const code = await exited;
    clearTimeout(killer);
    return code;
  };
  return new Promise((resolve, reject) => {
    const tail = () =>
      logs
        .slice(-30)
        .map((line) => JSON.stringify(line))
        .join("\n");
    const fail = (reason: string) => {
      clearTimeout(timer);
      void stop();
      reject(new Error(`the ${service} process ${reason}. Its last output:\n${tail()}`));
    };
    const timer = setTimeout(() => fail(`did not log "${readyMessage}" within ${timeoutMs} ms`), timeoutMs);
    const onExit = (code: number | null) => fail(`exited with code ${code} before it was ready`);
    child.once("exit", onExit);
    const onLine = (line: string) => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        parsed = { raw: line };
      }
      logs.push(parsed);
      const msg = typeof parsed.msg === "string" ? parsed.msg : undefined;
      if (
        msg !== undefined &&
        (typeof readyMessage === "string" ? msg === readyMessage : readyMessage.test(msg))
      ) {
        clearTimeout(timer);
        child.off("exit", onExit);
        resolve({ child, logs, stop });
      }
    };
    if (child.stdout) createInterface({ input: child.stdout }).on("line", onLine);
    if (child.stderr) createInterface({ input: child.stderr }).on("line", onLine);
  });
}
