/**
 * The bytes of large replies one process stores or reads at once (`[bus]
 * large_replies_in_flight_bytes`): a reply being stored holds its encoded payload, one being read
 * its reassembly buffer, until done. One that does not fit waits its turn (first come, first
 * served) for at most `LARGE_REPLY_WAIT_MS`; one larger than the whole budget, or still waiting
 * then, is refused with a `LargeRepliesBudgetError` that says which budget and what to change.
 * Every bus of a process shares one budget (`LARGE_REPLIES_BUDGET`): the all-in-one's catalog,
 * dispatcher and gateway hold one memory between them.
 *
 * A large reply read while a request is being served (`LargeReplyHold`) stays held until that
 * request is answered: the handler works on it meanwhile (the dispatcher projects a connector's
 * result and sends it on), and its own reply then takes the read one's place without waiting.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { DEFAULT_LARGE_REPLIES_IN_FLIGHT_BYTES, largeRepliesBudgetExceeded } from "@toolbus/protocol";

/** How long a large reply waits for room before it is refused. */
export const LARGE_REPLY_WAIT_MS = 30_000;

export class LargeRepliesBudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LargeRepliesBudgetError";
  }
}

interface Waiter {
  bytes: number;
  grant(): void;
}

export class LargeRepliesBudget {
  #limit: number;
  #inFlight = 0;
  readonly #queue: Waiter[] = [];
  /** Told once there is room again (see `whenRoom`). */
  #roomWaiters: Array<() => void> = [];

  constructor(limitBytes: number) {
    this.#limit = limitBytes;
  }

  get limit(): number {
    return this.#limit;
  }

  /** A new limit applies to what asks from now on; what holds bytes keeps them. */
  set limit(bytes: number) {
    this.#limit = bytes;
    this.#grantWaiting();
  }

  /** Bytes held now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Whether a large reply could start now: nobody waits, and some bytes are free. */
  get hasRoom(): boolean {
    return this.#queue.length === 0 && this.#inFlight < this.#limit;
  }

  /**
   * Resolves once there is room (see `hasRoom`): a reader of a large message from outside (an MCP
   * server's output) stops reading until then, so the message waits where it comes from.
   */
  whenRoom(): Promise<void> {
    if (this.hasRoom) return Promise.resolve();
    return new Promise((resolve) => this.#roomWaiters.push(resolve));
  }

  /** Holds `bytes` now when they fit and nobody waits before them; undefined otherwise. */
  tryTake(bytes: number): (() => void) | undefined {
    if (this.#queue.length > 0 || this.#inFlight + bytes > this.#limit) return undefined;
    this.#inFlight += bytes;
    return this.#releaser(bytes);
  }

  /**
   * Holds `bytes` at once, past the limit if need be: for a reply that takes the place of large
   * replies its request holds (waiting, it could wait for itself).
   */
  force(bytes: number): () => void {
    this.#inFlight += bytes;
    return this.#releaser(bytes);
  }

  /** Holds `bytes` until the returned release is called; waits its turn for at most `waitMs`. */
  take(bytes: number, waitMs = LARGE_REPLY_WAIT_MS): Promise<() => void> {
    if (bytes > this.#limit) {
      return Promise.reject(
        new LargeRepliesBudgetError(largeRepliesBudgetExceeded({ bytes, budget: this.#limit })),
      );
    }
    if (this.#queue.length === 0 && this.#inFlight + bytes <= this.#limit) {
      this.#inFlight += bytes;
      return Promise.resolve(this.#releaser(bytes));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        bytes,
        grant: () => {
          clearTimeout(timer);
          this.#inFlight += bytes;
          resolve(this.#releaser(bytes));
        },
      };
      const timer = setTimeout(() => {
        this.#queue.splice(this.#queue.indexOf(waiter), 1);
        reject(
          new LargeRepliesBudgetError(
            largeRepliesBudgetExceeded({ bytes, budget: this.#limit, waitedMs: waitMs }),
          ),
        );
        // Those behind it may fit now.
        this.#grantWaiting();
      }, waitMs);
      this.#queue.push(waiter);
    });
  }

  #releaser(bytes: number): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight -= bytes;
      this.#grantWaiting();
    };
  }

  #grantWaiting(): void {
    for (let next = this.#queue[0]; next !== undefined; next = this.#queue[0]) {
      // Past the limit, or lowered below it (refused by its timer then, not granted).
      if (next.bytes > this.#limit || this.#inFlight + next.bytes > this.#limit) break;
      this.#queue.shift();
      next.grant();
    }
    if (this.hasRoom && this.#roomWaiters.length > 0) {
      const waiters = this.#roomWaiters;
      this.#roomWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}

/** The large replies a request being served has read: held until it is answered. */
export class LargeReplyHold {
  #bytes = 0;
  #answered = false;
  readonly #releases: Array<() => void> = [];

  get bytes(): number {
    return this.#bytes;
  }

  add(bytes: number, release: () => void): void {
    // Read after the request was answered (work it left running, a late second send): nothing
    // holds it any more, and bytes kept here would be lost to the budget for good.
    if (this.#answered) {
      setImmediate(release);
      return;
    }
    this.#bytes += bytes;
    this.#releases.push(release);
  }

  /** The request was answered: gives back what it held, and whatever it reads later at once. */
  release(): void {
    this.#answered = true;
    for (const release of this.#releases.splice(0)) release();
    this.#bytes = 0;
  }
}

/** The hold of the request being served, in whose async context a large reply is read. */
export const LARGE_REPLY_HOLDS = new AsyncLocalStorage<LargeReplyHold>();

/** The process's budget, shared by its buses; `setLargeRepliesInFlightBytes` sets it from `[bus]`. */
export const LARGE_REPLIES_BUDGET = new LargeRepliesBudget(DEFAULT_LARGE_REPLIES_IN_FLIGHT_BYTES);

/** Applies `[bus] large_replies_in_flight_bytes` to this process (services call it at start). */
export function setLargeRepliesInFlightBytes(bytes: number): void {
  LARGE_REPLIES_BUDGET.limit = bytes;
}
