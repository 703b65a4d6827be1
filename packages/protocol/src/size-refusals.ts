/**
 * What toolbus says when something is too large (`payload_too_large`, and a server that fails
 * to start for its listing's size). Each text names what was too large, its size when known,
 * the limit and the setting behind it, and what to change: the caller's request, or the
 * operator's configuration. The texts live here so each refusal fits its case, and one case
 * reads alike wherever it is refused.
 */

/** A size for messages: `4 MiB`, `512 KiB`, `100 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

const RAISE_MAX_PAYLOAD = "raise max_payload in the NATS server's configuration";

/** The cap on one message read from an MCP server (core/message-size.ts in the catalog). */
const MCP_READ_LIMIT =
  "the most toolbus reads in one message from an MCP server (the larger of [bus] max_reply_bytes and NATS max_payload)";

/** What each listing lists, by its MCP method. */
const LISTED: Readonly<Record<string, string>> = {
  "tools/list": "tools",
  "resources/list": "resources",
  "resources/templates/list": "resource templates",
  "prompts/list": "prompts",
};

/**
 * An MCP server's reply over the cap, in the words of the request it answered (`method`; the
 * request is unknown when absent): a tool's result, a page of a listing, or another reply.
 */
export function mcpReplyTooLarge(facts: { method?: string; limit: number; bytes?: number }): string {
  const { method, limit } = facts;
  const of = facts.bytes === undefined ? "" : ` of ${facts.bytes} bytes`;
  const over = `larger than ${limit} bytes, ${MCP_READ_LIMIT}`;
  if (method === "tools/call") {
    return `the tool's result${of} is ${over}; ask the tool for less output, or raise [bus] max_reply_bytes`;
  }
  const listed = method === undefined ? undefined : LISTED[method];
  if (method === "tools/list") {
    return `the server's tools/list page${of} is ${over}; have the server offer fewer tools or list them in smaller pages, or ${RAISE_MAX_PAYLOAD} (a server's tools are kept in one NATS message)`;
  }
  if (listed !== undefined) {
    return `the server's ${method} page${of} is ${over}; have the server list fewer ${listed} per page, or ${RAISE_MAX_PAYLOAD} (a page travels in one NATS message)`;
  }
  if (method !== undefined) {
    return `the server's ${method} reply${of} is ${over}; ask for less, or ${RAISE_MAX_PAYLOAD} (the reply travels in one NATS message)`;
  }
  return `the server's reply${of} is ${over}; ask for less, or raise [bus] max_reply_bytes`;
}

/** A server's catalog entry (its tools, as every replica and gateway reads them) over one NATS message. */
export function catalogEntryTooLarge(facts: {
  server: string;
  tools: number;
  bytes: number;
  limit: number;
}): string {
  const { server } = facts;
  return `the catalog entry of ${server} (${facts.tools} tools) is ${facts.bytes} bytes, more than one NATS message holds (max_payload: ${facts.limit} bytes); expose fewer of its tools (enabled_tools or disabled_tools in [mcp_servers.${server}]), or ${RAISE_MAX_PAYLOAD}`;
}

/** A bus request over one NATS message; `limit` when the connection knows it. */
export function busRequestTooLarge(facts: { subject: string; bytes: number; limit?: number }): string {
  const holds = facts.limit === undefined ? "NATS max_payload" : `max_payload: ${facts.limit} bytes`;
  return `the request on ${facts.subject} is ${facts.bytes} bytes, more than one NATS message holds (${holds}); send less, or ${RAISE_MAX_PAYLOAD}`;
}

/**
 * A served endpoint's reply over one NATS message: refused (`stored` absent), stored in the
 * large-replies stream for its caller, or refused because storing it failed.
 */
export function busReplyTooLarge(facts: {
  endpoint: string;
  bytes: number;
  limit: number;
  stored?:
    | { stream: string; subject: string; ttlSec: number; header: string }
    | { stream: string; failure: string };
}): string {
  const over = `the reply of ${facts.endpoint} is ${facts.bytes} bytes, over the bus limit of ${facts.limit} bytes (NATS max_payload)`;
  const { stored } = facts;
  if (stored === undefined)
    return `${over}; ask for less (a narrower request or a page), or ${RAISE_MAX_PAYLOAD}`;
  if ("subject" in stored) {
    return `${over}: it is stored in the JetStream stream ${stored.stream} as ${stored.subject}.<chunk> for ${stored.ttlSec} s; read it there (the ${stored.header} header names it)`;
  }
  return `${over}, and it could not be stored in the stream ${stored.stream}: ${stored.failure}`;
}

/**
 * A large reply this process cannot hold now: `[bus] large_replies_in_flight_bytes` bounds the
 * bytes of large replies being stored or read at once. `waitedMs`: how long it waited for room
 * (absent when it is larger than the whole budget).
 */
export function largeRepliesBudgetExceeded(facts: {
  bytes: number;
  budget: number;
  waitedMs?: number;
}): string {
  const budget = `this process's budget for large replies in flight ([bus] large_replies_in_flight_bytes = ${facts.budget}, ${formatBytes(facts.budget)})`;
  const why =
    facts.waitedMs === undefined
      ? `is larger than ${budget}`
      : `did not fit in ${budget} within ${Math.round(facts.waitedMs / 1000)} s, other large replies holding it`;
  return `${facts.bytes} bytes ${why}; raise [bus] large_replies_in_flight_bytes, retry later, or ask for less`;
}

/** An HTTP request body over the server's body limit. */
export function requestBodyTooLarge(limitBytes: number): string {
  return `the request body is over the limit of ${formatBytes(limitBytes)} for one request; send a smaller request`;
}

/**
 * The default of `[bus] large_replies_in_flight_bytes`: the bytes of large replies one process
 * stores or reads at once (and a served request holds those it read until it has answered).
 * Twice the default `max_reply_bytes`: one result of the largest size at a time, or several
 * smaller ones, the rest waiting their turn.
 */
export const DEFAULT_LARGE_REPLIES_IN_FLIGHT_BYTES = 32 * 1024 * 1024;

/**
 * A call's outcome over what its call ledger keeps in one record, whose reply was not stored
 * for a retry either: the retry of its callId is told so instead of being answered.
 */
export function callOutcomeTooLarge(facts: { bytes: number; limit: number }): string {
  return `this call's outcome (${facts.bytes} bytes) is more than the call ledger keeps in one record (NATS max_payload: ${facts.limit} bytes) and its reply was not stored, so only its first answer carried it; call again with a new callId to run it again`;
}
