/**
 * A call's reply, or — when it has none within the caller's `holdMs` — a retryable `timeout`
 * while the call goes on. The caller sends the same request again (same callId) and this
 * replica's deduper, or the cluster's call ledger on another replica, joins it to the call that
 * runs: no reply waits longer than `holdMs`, however long a human takes to answer its approval.
 */
import { WireError } from "@toolbus/protocol";

export function answerWithin<T>(answer: Promise<T>, holdMs: number | undefined, callId: string): Promise<T> {
  if (holdMs === undefined) return answer;
  let timer: NodeJS.Timeout | undefined;
  const held = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new WireError(
            "timeout",
            `call ${callId} has no reply yet (it may wait for an approval or for its tool); send it again with the same callId for its reply`,
            { retryable: true },
          ),
        ),
      holdMs,
    );
  });
  return Promise.race([answer, held]).finally(() => clearTimeout(timer));
}
