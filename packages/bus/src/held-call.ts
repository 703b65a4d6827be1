/**
 * Held requests (`holdMs`, docs/contract.md "Held calls"), both sides, for whatever may wait for
 * a human: dispatch calls (an approval) and a server's elicitation or sampling during a call.
 * The requester sends with `holdMs`, and while the responder answers `timeout` (no answer yet)
 * or no reply comes within the hold and its grace, sends the same request (same id) again, until
 * its own timeout. The responder answers each send within the hold and joins a repeated send to
 * the answer still coming. A reply never waits longer than one hold, so nothing depends on how
 * long NATS keeps a reply subject open for its responder (2 minutes by default), and a human may
 * take as long as the requester allows.
 */
import { CALL_HOLD_MS, WireError } from "@toolbus/protocol";

/** Room for the round trip and a busy dispatcher, on top of the hold. */
export const HOLD_GRACE_MS = 10_000;

export async function heldCall<T>(
  /** Sends the request once with `holdMs`, waiting at most `timeoutMs` for its reply. */
  send: (holdMs: number, timeoutMs: number) => Promise<T>,
  options: {
    timeoutMs: number;
    /** What the requests are, for the final error: "call <callId>". */
    what: string;
    holdMs?: number;
    now?: () => number;
    /** Stops sending again (the send under way ends with its hold): nobody waits for the reply. */
    signal?: AbortSignal;
  },
): Promise<T> {
  const now = options.now ?? Date.now;
  const holdMs = options.holdMs ?? CALL_HOLD_MS;
  const deadline = now() + options.timeoutMs;
  for (;;) {
    const remaining = deadline - now();
    try {
      return await send(holdMs, Math.max(1, Math.min(holdMs + HOLD_GRACE_MS, remaining)));
    } catch (error) {
      // A retryable `timeout` is the responder's "no answer yet" or a send nobody answered: the
      // id makes sending again safe. Anything else, a final timeout included, is the answer.
      if (!(error instanceof WireError && error.code === "timeout" && error.retryable)) throw error;
      if (options.signal?.aborted) throw options.signal.reason;
      if (now() >= deadline) {
        throw new WireError(
          "timeout",
          `${options.what} has no reply after ${Math.round(options.timeoutMs / 1000)} s; it may still be running`,
          { cause: error },
        );
      }
    }
  }
}

/**
 * A held request's "no answer yet" (a retryable `timeout` on the wire): routine while a human
 * takes their time, so it is logged at debug, not as a failure every hold.
 */
export class NoAnswerYet extends WireError {
  constructor(message: string) {
    super("timeout", message, { retryable: true });
    this.name = "NoAnswerYet";
  }
}

/**
 * The responder's side: `answer`, or — when it has none within `holdMs` — a retryable `timeout`
 * saying `noAnswerYet`, while the work goes on for the requester's next send to join.
 */
export function answerWithin<T>(
  answer: Promise<T>,
  holdMs: number | undefined,
  noAnswerYet: string,
): Promise<T> {
  if (holdMs === undefined) return answer;
  let timer: NodeJS.Timeout | undefined;
  const held = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoAnswerYet(noAnswerYet)), holdMs);
  });
  return Promise.race([answer, held]).finally(() => clearTimeout(timer));
}
