/**
 * The bytes of large replies one process stores or reads at once (`[bus]
 * large_replies_in_flight_bytes`): a reply being stored holds its encoded payload, one being read
 * its reassembly buffer, until done. One that does not fit waits its turn (first come, first
 * served) for at most `LARGE_REPLY_WAIT_MS`; one larger than the whole budget, or still waiting
 * then, is refused with a `LargeRepliesBudgetError` that says which budget and what to change.
 * Every bus of a process shares one budget (`LARGE_REPLIES_BUDGET`): the all-in-one's catalog,
 * dispatcher and gateway hold one memory between them.
 */
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
      if (next.bytes > this.#limit) {
        // The limit was lowered below it: refused by its timer, not granted.
        return;
      }
      if (this.#inFlight + next.bytes > this.#limit) return;
      this.#queue.shift();
      next.grant();
    }
  }
}

/** The process's budget, shared by its buses; `setLargeRepliesInFlightBytes` sets it from `[bus]`. */
export const LARGE_REPLIES_BUDGET = new LargeRepliesBudget(DEFAULT_LARGE_REPLIES_IN_FLIGHT_BYTES);

/** Applies `[bus] large_replies_in_flight_bytes` to this process (services call it at start). */
export function setLargeRepliesInFlightBytes(bytes: number): void {
  LARGE_REPLIES_BUDGET.limit = bytes;
}
