/**
 * Remembered approvals: the keys under which "allow for this session" and "allow and don't ask me
 * again" are stored (docs/reference-behavior.md §5.2 step 3), whether a stored grant still applies, and which grants
 * a decision creates (§5.5). A grant is bound to the tool's fingerprint: once the tool's definition
 * changes, the grant no longer applies and the human is asked again (toolbus's addition).
 */
import type { ApprovalMode, DecideResult } from "./types.js";

export interface GrantIdentity {
  server: string;
  connectorId?: string;
  tool: string;
  /** Who asked for the call at the edge: "allow always" is theirs alone unless given to everyone. */
  requestedBy?: string | undefined;
}

/** What a session or persistent store holds under a key. */
export interface Grant {
  fingerprint: string;
}

/** Read access to one store; a `ReadonlyMap<string, Grant>` fits. */
export interface GrantLookup {
  get(key: string): Grant | undefined;
}

export interface GrantKeys {
  session?: string;
  /** The requester's own persistent grant (everyone's when the call names no requester). */
  persistent?: string;
  /** Everyone's persistent grant of the tool, looked up after the requester's own. */
  everyone?: string;
}

/** Whom an "allow always" answer allows: the call's requester (the default), or everyone. */
export type GrantScope = "requester" | "everyone";

/**
 * `<thread>.<server>.<connector>.<tool>`. Exists only in mode `auto`, and only for a call that
 * belongs to a thread: without one there is no session to remember the choice for.
 */
export function sessionKey(
  mode: ApprovalMode,
  identity: GrantIdentity & { threadId?: string | undefined },
): string | undefined {
  if (mode !== "auto" || identity.threadId === undefined || identity.threadId === "") return undefined;
  return (
    sessionKeyPrefix(identity.threadId) +
    [identity.server, identity.connectorId ?? "", identity.tool].map(encodeKeyToken).join(".")
  );
}

/**
 * The start every session key of one thread shares (`<thread>.`): a thread's session grants are
 * the keys under it, and forgetting them (its session ended) is a listing of `<thread>.>`.
 */
export function sessionKeyPrefix(threadId: string): string {
  return `${encodeKeyToken(threadId)}.`;
}

/**
 * `<server>.<connector>.<tool>`, the same identity without the thread: everyone's grant; mode
 * `auto` only. With a requester, `<requester>.<server>.<connector>.<tool>`: theirs (four tokens,
 * so never one of everyone's three).
 */
export function persistentKey(
  mode: ApprovalMode,
  identity: GrantIdentity,
  scope: GrantScope = "requester",
): string | undefined {
  if (mode !== "auto") return undefined;
  const tool = [identity.server, identity.connectorId ?? "", identity.tool];
  const own = scope === "requester" && identity.requestedBy !== undefined && identity.requestedBy !== "";
  return (own ? [identity.requestedBy as string, ...tool] : tool).map(encodeKeyToken).join(".");
}

export function grantKeys(
  mode: ApprovalMode,
  identity: GrantIdentity & { threadId?: string | undefined },
): GrantKeys {
  const session = sessionKey(mode, identity);
  const persistent = persistentKey(mode, identity);
  const everyone = persistentKey(mode, identity, "everyone");
  return {
    ...(session === undefined ? {} : { session }),
    ...(persistent === undefined ? {} : { persistent }),
    ...(everyone === undefined || everyone === persistent ? {} : { everyone }),
  };
}

/** A stored grant applies only to the exact tool definition it was given for. */
export function grantApplies(grant: Grant | undefined, fingerprint: string): boolean {
  return grant !== undefined && grant.fingerprint === fingerprint;
}

export interface GrantWrite {
  key: string;
  grant: Grant;
}

export interface GrantEffects {
  session?: GrantWrite;
  persistent?: GrantWrite;
}

/**
 * The grants a fresh decision creates (§5.5): for-session remembers the session key; always
 * persists the persistent key — the requester's, or everyone's when an approver gives it to
 * everyone — and also remembers the session key (falling back to the session key alone when
 * there is no persistent one). A decision that came from a stored grant creates none.
 */
export function grantEffects(
  result: DecideResult,
  keys: GrantKeys,
  fingerprint: string,
  scope: GrantScope = "requester",
): GrantEffects {
  if (result.source === "session" || result.source === "persistent") return {};
  const effects: GrantEffects = {};
  const remember = result.decision === "approved_for_session" || result.decision === "approved_always";
  if (remember && keys.session !== undefined) effects.session = { key: keys.session, grant: { fingerprint } };
  const persistent = scope === "everyone" ? (keys.everyone ?? keys.persistent) : keys.persistent;
  if (result.decision === "approved_always" && persistent !== undefined) {
    effects.persistent = { key: persistent, grant: { fingerprint } };
  }
  return effects;
}

const READABLE_TOKEN = /^[A-Za-z0-9_-]+$/;

/**
 * Keys must be valid NATS KV keys (`[-/_=.A-Za-z0-9]`), with `.` separating tokens. Letters,
 * digits, `_` and `-` stay readable; every other UTF-8 byte becomes `=XX`; an empty token is `=`.
 */
export function encodeKeyToken(value: string): string {
  if (value === "") return "=";
  if (READABLE_TOKEN.test(value)) return value;
  let out = "";
  for (const char of value) {
    if (/^[A-Za-z0-9_-]$/.test(char)) {
      out += char;
      continue;
    }
    for (const byte of new TextEncoder().encode(char)) {
      out += `=${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    }
  }
  return out;
}
