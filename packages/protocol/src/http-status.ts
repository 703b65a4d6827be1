/**
 * How a wire error is answered over HTTP, in one place: every HTTP surface (the gateway's REST
 * routes, the approvals routes, the HTTP guard in front of both) answers a failure as
 * `{error:{code,message,retryable}}` with the status of its code here, and the gateway's OpenAPI
 * document lists the same. README.md ("Error codes") shows the table; a test keeps them in step.
 */
import type { ErrorCode } from "./errors.js";

/**
 * The HTTP status of each wire error code. Caller faults are 4xx, faults of toolbus or of what it
 * depends on are 5xx: 500 only for `internal` (our own fault), 502 for a connection that broke
 * upstream, 503 for a server or service not serving (yet), 504 for an answer that came too late.
 */
export const HTTP_STATUS_BY_CODE = {
  bad_request: 400,
  unauthorized: 401,
  /** The tool exists but is not exposed to the model: refused, not missing. */
  tool_hidden: 403,
  approval_denied: 403,
  /** Nobody approved in time: the call is refused as if denied (408 is for a slow request *message*, and user agents resend on it). */
  approval_timed_out: 403,
  unknown_tool: 404,
  /** The call conflicts with the catalog as it is now: read it again and prepare anew. */
  stale_revision: 409,
  /** The call was withdrawn (a human chose Cancel, or its caller went away) before it ran. */
  approval_cancelled: 409,
  payload_too_large: 413,
  internal: 500,
  transport_error: 502,
  server_unavailable: 503,
  server_not_ready: 503,
  timeout: 504,
} as const satisfies Record<ErrorCode, number>;

export type HttpErrorStatus = (typeof HTTP_STATUS_BY_CODE)[ErrorCode];

/**
 * The HTTP edge's refusals whose status says more than their code's own: the body carries the
 * code, the status narrows it. No surface answers a code at any other status than its own or
 * one of these.
 */
export const HttpRefusal = {
  /** Host or Origin not allowed, or a bearer token whose role lacks the route's access. */
  forbidden: { status: 403, code: "unauthorized" },
  /** A body sent with another Content-Type than application/json. */
  unsupportedMediaType: { status: 415, code: "bad_request" },
  /** One client already holds the most event streams it may (the process-wide limit is a plain 503). */
  tooManyStreams: { status: 429, code: "server_unavailable" },
  /** A call to cancel (`DELETE /v1/calls/{callId}`) that runs nowhere here for the asking token. */
  noSuchCall: { status: 404, code: "bad_request" },
} as const satisfies Record<string, { status: number; code: ErrorCode }>;
export type HttpRefusal = (typeof HttpRefusal)[keyof typeof HttpRefusal];
