/**
 * Nothing the harness starts outlives the process that started it: when that process exits
 * (normally, on an uncaught error, after `process.exit`, or on SIGINT/SIGTERM/SIGHUP), every
 * child still running is SIGKILLed and every registered clean-up runs. Exit handlers must be
 * synchronous, so the clean-ups are too.
 */

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

class ExitGuard {
  readonly #pids = new Set<number>();
  readonly #cleanups = new Set<() => void>();
  #installed = false;

  adopt(pid: number): void {
    this.#install();
    this.#pids.add(pid);
  }

  release(pid: number): void {
    this.#pids.delete(pid);
  }

  /** Runs `cleanup` at exit unless the returned function is called first (the orderly stop did the work). */
  onExit(cleanup: () => void): () => void {
    this.#install();
    this.#cleanups.add(cleanup);
    return () => this.#cleanups.delete(cleanup);
  }

  #install(): void {
    if (this.#installed) return;
    this.#installed = true;
    process.once("exit", () => this.#runAll());
    for (const signal of SIGNALS) {
      // A signal's default action ends the process without "exit" handlers; clean up first. If
      // nobody else handles the signal, end the process as the default action would.
      const alone = process.listenerCount(signal) === 0;
      const onSignal = () => {
        this.#runAll();
        if (alone && process.listenerCount(signal) === 1) {
          process.off(signal, onSignal);
          process.kill(process.pid, signal);
        }
      };
      process.on(signal, onSignal);
    }
  }

  #runAll(): void {
    for (const pid of this.#pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    for (const cleanup of this.#cleanups) {
      try {
        cleanup();
      } catch {
        // Best effort: the process is ending.
      }
    }
    this.#pids.clear();
    this.#cleanups.clear();
  }
}

export const exitGuard = new ExitGuard();
