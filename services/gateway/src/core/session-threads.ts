/**
 * The thread an MCP tools/call belongs to (docs/reference-behavior.md §4 step 6.4: every call carries
 * a `threadId`): the client's own `_meta.threadId` when it sends one (Codex does), else the MCP
 * session's id. The thread scopes "Allow for this session" grants and is what the server gets as
 * `_meta.threadId`. A session remembers the threads its client named (a few: the first named
 * are let go past the limit), so their grants end when the session ends.
 *
 * Grants never cross principals: a named thread belongs to the principal (token) that named it
 * first, while it is in use (the gateway's session store keeps the binding, refreshed by its
 * calls, for the idle TTL). Another principal naming it is refused; a thread bound anew starts
 * with no grants, so whatever its last holder was granted never passes on.
 */
import { MAX_ID_LENGTH } from "@toolbus/protocol";

/** Threads of its client's own one session keeps; past it the first named is let go. */
export const MAX_SESSION_THREADS = 16;

export type CallThread = { ok: true; threadId: string; named: boolean } | { ok: false; message: string };

/**
 * `_meta.threadId` when the client named one (`named`), else the session's id. A value that is
 * not a thread id is refused, saying what one is.
 */
export function callThread(meta: unknown, sessionId: string): CallThread {
  const named =
    meta !== null && typeof meta === "object" ? (meta as Record<string, unknown>).threadId : undefined;
  if (named === undefined) return { ok: true, threadId: sessionId, named: false };
  if (typeof named !== "string" || named.length === 0 || named.length > MAX_ID_LENGTH) {
    return {
      ok: false,
      message: `Invalid params: _meta.threadId must be a string of 1 to ${MAX_ID_LENGTH} characters naming your thread (got ${describe(named)}); leave it out to use the MCP session as the thread`,
    };
  }
  return { ok: true, threadId: named, named: named !== sessionId };
}

/** The threads a session remembers after a call on `threadId`, and the ones let go to make room. */
export function rememberThread(
  threads: readonly string[],
  threadId: string,
  max = MAX_SESSION_THREADS,
): { threads: string[]; released: string[] } {
  if (threads.includes(threadId)) return { threads: [...threads], released: [] };
  const next = [...threads, threadId];
  const over = Math.max(0, next.length - max);
  return { threads: next.slice(over), released: next.slice(0, over) };
}

/** Every thread whose session grants end with the session: its own and its client's. */
export function sessionThreads(sessionId: string, named: readonly string[] | undefined): string[] {
  return [sessionId, ...(named ?? []).filter((threadId) => threadId !== sessionId)];
}

/**
 * Whether a principal may use a thread it named: `claimed` (it was free, now bound to the
 * principal, its old grants forgotten), `held` (already the principal's), `taken` (another
 * principal's), or `unavailable` (the store or the approvals service did not answer).
 */
export type ThreadClaim = "claimed" | "held" | "taken" | "unavailable";

/**
 * Why a call may not use the thread it named in `field`, or undefined when it may. `retryable`:
 * the same call may succeed later (the check could not be made).
 */
export function threadClaimRefusal(
  claim: ThreadClaim,
  field: "_meta.threadId" | "threadId",
): { message: string; retryable: boolean } | undefined {
  const instead =
    field === "_meta.threadId"
      ? "name a thread of your own, or leave it out to use this MCP session as the thread"
      : "name a thread of your own, or leave threadId out";
  switch (claim) {
    case "claimed":
    case "held":
      return undefined;
    case "taken":
      return {
        retryable: false,
        message: `${field} names a thread another principal (token) is using, and its "Allow for this session" grants are not yours; ${instead}`,
      };
    case "unavailable":
      return {
        retryable: true,
        message: `could not check which principal uses the thread ${field} names (the gateway's session store or the approvals service did not answer); try again`,
      };
  }
}

function describe(value: unknown): string {
  if (typeof value === "string") return value.length === 0 ? "an empty string" : `${value.length} characters`;
  return value === null ? "null" : typeof value;
}
