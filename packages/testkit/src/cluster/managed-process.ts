/**
 * One OS process of the cluster (a nats-server node or a toolbus service): started from a fixed
 * command, ready when a line of its output matches (and an optional probe answers), SIGKILLed
 * and started again with the same command. Every process is also in the exit guard, so none
 * outlives the test run.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { exitGuard } from "./exit-guard.js";

export interface ProcessSpec {
  /** Named in errors and in the output's restart markers, e.g. `dispatcher[1]`. */
  name: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  /** A line of stdout or stderr that says the process is ready. */
  readyLine: RegExp;
  /** After the ready line, polled until it resolves true (e.g. an HTTP health check). */
  probe?: () => Promise<boolean>;
  /** How long start-up may take (default 60 s). */
  readyTimeoutMs?: number;
  /**
   * Starts again after an exit before ready, this many times (default 0), as an orchestrator's
   * restart policy would; each is marked in the output.
   */
  startupRetries?: number;
}

/** What a test does to one process. */
export interface ClusterProcess {
  readonly name: string;
  /** The running process's pid; undefined while it is down. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGKILL (no shutdown of any kind); resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again with the same command and environment (killing it first if it runs); resolves when ready. */
  restart(): Promise<void>;
  /** What it printed so far, stdout and stderr interleaved, across restarts (the last 512 KiB). */
  output(): string;
}

const OUTPUT_LIMIT = 512 * 1024;
const DEFAULT_READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 3_000;

export class ManagedProcess implements ClusterProcess {
  readonly name: string;
  readonly #spec: ProcessSpec;
  #child: ChildProcess | undefined;
  #output = "";
  /** Set by stop(): a start still waiting gives up instead of starting the process again. */
  #stopped = false;

  constructor(spec: ProcessSpec) {
    this.name = spec.name;
    this.#spec = spec;
  }

  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined;
  }

  get running(): boolean {
    const child = this.#child;
    return child !== undefined && child.exitCode === null && child.signalCode === null;
  }

  output(): string {
    return this.#output;
  }

  /** Spawns the process and waits until it is ready; on failure it is killed and the error carries its output. */
  async start(): Promise<void> {
    const retries = this.#spec.startupRetries ?? 0;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#startOnce();
      } catch (error) {
        if (attempt >= retries || this.#stopped || !(error instanceof ExitedBeforeReady)) throw error;
        this.#append(`--- ${this.name} exited before it was ready; starting it again ---\n`);
      }
    }
  }

  async #startOnce(): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`);
    if (this.#stopped) throw new Error(`${this.name} was stopped with the cluster`);
    const { command, args, env, readyLine, probe } = this.#spec;
    const timeoutMs = this.#spec.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
    if (this.#output !== "") this.#append(`--- ${this.name} started again ---\n`);
    const child = spawn(command, [...args], { env, stdio: ["ignore", "pipe", "pipe"] });
    this.#child = child;
    if (child.pid !== undefined) exitGuard.adopt(child.pid);
    child.once("exit", () => {
      if (child.pid !== undefined) exitGuard.release(child.pid);
    });
    let sawReadyLine = false;
    const onLine = (line: string) => {
      this.#append(`${line}\n`);
      if (readyLine.test(line)) sawReadyLine = true;
    };
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", onLine);
    }
    let spawnError: Error | undefined;
    child.once("error", (error) => {
      spawnError = error;
    });

    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (spawnError) throw this.#failure(`could not start: ${spawnError.message}`);
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new ExitedBeforeReady(
          this.#failure(`exited (code ${child.exitCode}, signal ${child.signalCode}) before it was ready`)
            .message,
        );
      }
      if (sawReadyLine && (probe === undefined || (await probe().catch(() => false)))) return;
      if (Date.now() > deadline) {
        await this.kill();
        throw this.#failure(`was not ready within ${timeoutMs / 1000} s`);
      }
      await sleep(50);
    }
  }

  async kill(): Promise<void> {
    const child = this.#child;
    if (child === undefined || !this.running) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }

  async restart(): Promise<void> {
    await this.kill();
    await this.start();
  }

  /** SIGTERM, then SIGKILL after 3 s: how the harness ends a process it is done with, for good. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const child = this.#child;
    if (child === undefined || !this.running) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  #append(text: string): void {
    this.#output += text;
    if (this.#output.length > OUTPUT_LIMIT) this.#output = this.#output.slice(-OUTPUT_LIMIT);
  }

  #failure(reason: string): Error {
    const tail = this.#output.split("\n").slice(-30).join("\n");
    return new Error(`${this.name} ${reason}. Its last output:\n${tail}`);
  }
}

class ExitedBeforeReady extends Error {}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
