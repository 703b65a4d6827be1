/**
 * The decides waiting on this replica, by request id, and the one place that wakes them. Two
 * sources feed it: the store, when this replica records a decision (at once, whatever the
 * database), and the Postgres notifications of decisions recorded by other replicas. A wait
 * woken twice for one decision (by both) takes the first; the second finds nothing to wake.
 */
import type { DecideResult } from "@toolbus/policy";
import type { DecisionSignals, DecisionWake } from "./ports.js";

export class DecisionWaiters implements DecisionSignals {
  readonly #waiters = new Map<string, Set<(result: DecideResult | undefined) => void>>();

  next(requestId: string): DecisionWake {
    let wake: (result: DecideResult | undefined) => void = () => {};
    const promise = new Promise<DecideResult | undefined>((resolve) => {
      wake = resolve;
    });
    let set = this.#waiters.get(requestId);
    if (set === undefined) {
      set = new Set();
      this.#waiters.set(requestId, set);
    }
    set.add(wake);
    const cancel = () => {
      const current = this.#waiters.get(requestId);
      current?.delete(wake);
      if (current?.size === 0) this.#waiters.delete(requestId);
    };
    return { promise, cancel };
  }

  /** Wakes the waits on `requestId`: with its decision, or undefined to make them read it. */
  wake(requestId: string, result: DecideResult | undefined): void {
    for (const wake of this.#waiters.get(requestId) ?? []) wake(result);
  }

  /** Wakes every wait to read its request again (a decision may have gone unheard). */
  wakeAll(): void {
    for (const set of this.#waiters.values()) for (const wake of set) wake(undefined);
  }
}
