/**
 * The calls this process is running that their caller may cancel: one abort signal per callId
 * while the call runs, aborted when the call's cancellation arrives. A cancellation may arrive
 * before the call does (it travels on another subject, from another sender, and a call may
 * spend a moment in the call ledger first), so one for a call not running here is remembered
 * for a while, and that call starts cancelled. Bounded: entries for running calls only, and at
 * most `maxRemembered` remembered cancellations, each for `rememberMs`.
 */

export interface CallCancellationsOptions {
  /** Milliseconds on a monotonic or wall clock. */
  now(): number;
  /** How long a cancellation for a call not running here is remembered. */
  rememberMs: number;
  /** The most remembered cancellations; past it the oldest is forgotten. */
  maxRemembered: number;
}

/** A call being tracked: its signal, until `release`. */
export interface TrackedCall {
  /** Aborted, with the cancellation's reason (a string), when the caller cancels the call. */
  readonly signal: AbortSignal;
  /** The call is over; a later cancellation is only remembered. */
  release(): void;
}

interface Running {
  controller: AbortController;
  holders: number;
}

export class CallCancellations {
  readonly #options: CallCancellationsOptions;
  readonly #running = new Map<string, Running>();
  /** Cancellations of calls not running here, oldest first (a Map keeps insertion order). */
  readonly #remembered = new Map<string, { reason: string; at: number }>();

  constructor(options: CallCancellationsOptions) {
    this.#options = options;
  }

  /** Calls tracked now, and cancellations remembered. */
  get size(): { running: number; remembered: number } {
    this.#forgetExpired();
    return { running: this.#running.size, remembered: this.#remembered.size };
  }

  /**
   * Tracks the call from now on; its signal is already aborted when its cancellation came first.
   * Tracking a call already tracked shares its signal (a request and its duplicate).
   */
  track(callId: string): TrackedCall {
    let running = this.#running.get(callId);
    if (running === undefined) {
      running = { controller: new AbortController(), holders: 0 };
      this.#running.set(callId, running);
      this.#forgetExpired();
      const early = this.#remembered.get(callId);
      if (early !== undefined) running.controller.abort(early.reason);
    }
    running.holders += 1;
    const entry = running;
    let released = false;
    return {
      signal: entry.controller.signal,
      release: () => {
        if (released) return;
        released = true;
        entry.holders -= 1;
        if (entry.holders === 0 && this.#running.get(callId) === entry) this.#running.delete(callId);
      },
    };
  }

  /**
   * The caller cancelled the call: its signal is aborted when it runs here (true), else the
   * cancellation is remembered for a call that may still arrive (false). Either way it is
   * remembered, so a call taken over or sent again after this also starts cancelled.
   */
  cancel(callId: string, reason: string): boolean {
    this.#forgetExpired();
    this.#remembered.delete(callId);
    this.#remembered.set(callId, { reason, at: this.#options.now() });
    while (this.#remembered.size > this.#options.maxRemembered) {
      const oldest = this.#remembered.keys().next().value as string;
      this.#remembered.delete(oldest);
    }
    const running = this.#running.get(callId);
    if (running === undefined) return false;
    if (!running.controller.signal.aborted) running.controller.abort(reason);
    return true;
  }

  #forgetExpired(): void {
    const cutoff = this.#options.now() - this.#options.rememberMs;
    for (const [callId, { at }] of this.#remembered) {
      if (at > cutoff) break;
      this.#remembered.delete(callId);
    }
  }
}

/** The reason a call's signal was aborted with, as text. */
export function cancelReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (typeof reason === "string") return reason;
  if (reason instanceof Error) return reason.message;
  return String(reason);
}
