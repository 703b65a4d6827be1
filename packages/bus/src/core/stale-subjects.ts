/**
 * When a NATS connection should be renewed because its server keeps refusing one JetStream
 * subject while JetStream itself is up. Seen on nats-server 2.9.10 after a node of the cluster
 * was lost: a long-lived connection went on getting "no responders" (or no answer) for every
 * write to the KV keys it had first tried during the outage — for minutes, after the cluster had
 * recovered — while a fresh connection to the same server wrote those keys at once. The state
 * that goes stale is the server's, per connection; only a new connection clears it. A subject is
 * stale only once JetStream took a write of another subject after it began failing: while every
 * write fails (an election, an outage) a new connection cures nothing, and renewing then would
 * spend the renewal that is needed once the cluster is back. Only requests nobody answered (no
 * responders, a timeout: see `jetStreamFailureOf`) are fed in as failures; a request refused for
 * what it is (too large, not permitted) fails the same way on any connection. And a subject that
 * goes on failing after a renewal it caused is not cured by renewing: it never causes another
 * until it has been answered. Pure: fed with what happened, it says when to renew.
 */

export interface StaleSubjectLimits {
  /** Failures of one subject, with no success between, that make it stale … */
  failures: number;
  /** … when the first of them is at least this old (a leader election takes a few seconds). */
  overMs: number;
  /** Renew at most this often (a real outage is not cured by reconnecting in a loop). */
  renewEveryMs: number;
  /** Subjects tracked at most (oldest forgotten first). */
  tracked: number;
}

export const STALE_SUBJECT_LIMITS: StaleSubjectLimits = {
  failures: 4,
  overMs: 8_000,
  renewEveryMs: 15_000,
  tracked: 1_000,
};

export class StaleSubjects {
  readonly #limits: StaleSubjectLimits;
  readonly #failing = new Map<string, { since: number; count: number }>();
  #lastRenewal = Number.NEGATIVE_INFINITY;
  /** When JetStream last took a write, of any subject. */
  #lastSuccess = Number.NEGATIVE_INFINITY;
  /** Subjects that were failing when the connection was last renewed, and not answered since. */
  readonly #renewedFor = new Set<string>();

  constructor(limits: StaleSubjectLimits = STALE_SUBJECT_LIMITS) {
    this.#limits = limits;
  }

  /** A request on `subject` went unanswered; true when the connection should be renewed now. */
  failed(subject: string, now: number): boolean {
    const entry = this.#failing.get(subject) ?? { since: now, count: 0 };
    entry.count++;
    this.#failing.delete(subject);
    this.#failing.set(subject, entry);
    if (this.#failing.size > this.#limits.tracked) {
      this.#failing.delete(this.#failing.keys().next().value as string);
    }
    const stale =
      entry.count >= this.#limits.failures &&
      now - entry.since >= this.#limits.overMs &&
      this.#lastSuccess > entry.since;
    if (!stale || this.#renewedFor.has(subject) || now - this.#lastRenewal < this.#limits.renewEveryMs) {
      return false;
    }
    this.#lastRenewal = now;
    this.#renewedFor.clear();
    for (const failing of this.#failing.keys()) this.#renewedFor.add(failing);
    this.#failing.clear();
    return true;
  }

  /** A request on `subject` was answered: it is not stale, and JetStream takes writes. */
  succeeded(subject: string, now: number): void {
    this.#failing.delete(subject);
    this.#renewedFor.delete(subject);
    this.#lastSuccess = now;
  }
}
