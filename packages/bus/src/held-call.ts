/**
 * The caller's side of a held dispatch call (`holdMs`, docs/contract.md): the request is sent
 * with `holdMs`, and while the dispatcher answers `timeout` (no reply yet) or no reply comes
 * within the hold and its grace, the same request (same callId) is sent again, until the
 * caller's own timeout. A reply never waits longer than one hold, so nothing depends on how long
 * NATS keeps a reply subject open for its responder (2 minutes by default), and a human may take
 * as long as the caller allows.
 */
import { CALL_HOLD_MS, WireError } from "@toolbus/protocol";

/** Room for the round trip and a busy dispatcher, on top of the hold. */
export const HOLD_GRACE_MS = 10_000;

export async function heldCall<T>(
  /** Sends the request once with `holdMs`, waiting at most `timeoutMs` for its reply. */
  send: (holdMs: number, timeoutMs: number) => Promise<T>,
  options: { timeoutMs: number; callId: string; holdMs?: number; now?: () => number },
): Promise<T> {
  const now = options.now ?? Date.now;
  const holdMs = options.holdMs ?? CALL_HOLD_MS;
  const deadline = now() + options.timeoutMs;
  for (;;) {
    const remaining = deadline - now();
    try {
      return await send(holdMs, Math.max(1, Math.min(holdMs + HOLD_GRACE_MS, remaining)));
    } catch (error) {
      // `timeout` is the dispatcher's "no reply yet" or a send nobody answered: the callId makes
      // sending again safe. Anything else is the call's answer.
      if (!(error instanceof WireError && error.code === "timeout")) throw error;
      if (now() >= deadline) {
        throw new WireError(
          "timeout",
          `call ${options.callId} has no reply after ${Math.round(options.timeoutMs / 1000)} s; it may still be running`,
          { cause: error },
        );
      }
    }
  }
}
