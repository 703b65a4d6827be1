/**
 * What a handler's failure becomes on the wire and in the log. A `WireError` keeps its code;
 * anything else is our fault: `internal`, with a message that leaks nothing but gives the
 * reader an error id to find the cause in the logs.
 */
import { type Envelope, type ErrorCode, errorEnvelope, WireError } from "@toolbus/protocol";
import { NoAnswerYet } from "../held-call.js";

export type LogLevel = "debug" | "info" | "warn" | "error";

/**
 * Caller faults at info, a dependency that is down or slow at warn, our own faults at error:
 * an operator paged by error level is paged for toolbus's bugs, never for a caller's mistake.
 */
export const LOG_LEVEL_BY_CODE: Readonly<Record<ErrorCode, LogLevel>> = {
  bad_request: "info",
  unknown_tool: "info",
  tool_hidden: "info",
  stale_revision: "info",
  approval_denied: "info",
  approval_timed_out: "info",
  approval_cancelled: "info",
  payload_too_large: "info",
  unauthorized: "info",
  server_unavailable: "warn",
  server_not_ready: "warn",
  timeout: "warn",
  transport_error: "warn",
  internal: "error",
};

export interface Failure {
  envelope: Envelope<never>;
  level: LogLevel;
  /** True when the failure is an unexpected throw (not a `WireError`): log it with its cause. */
  unexpected: boolean;
}

export function failureOf(
  err: unknown,
  where: { service: string; endpoint: string; errorId: string },
): Failure {
  // A code outside the closed set (from untyped code) would make an envelope nobody can read: internal.
  if (err instanceof WireError && Object.hasOwn(LOG_LEVEL_BY_CODE, err.code)) {
    return {
      envelope: errorEnvelope(err.code, err.message, err.retryable),
      // A held request answered "no answer yet" is the hold working, every few seconds.
      level: err instanceof NoAnswerYet ? "debug" : LOG_LEVEL_BY_CODE[err.code],
      unexpected: false,
    };
  }
  return {
    envelope: errorEnvelope("internal", internalErrorMessage(where)),
    level: "error",
    unexpected: true,
  };
}

export function internalErrorMessage(where: { service: string; endpoint: string; errorId: string }): string {
  return (
    `the request failed because of an internal error in ${where.service} (${where.endpoint}); ` +
    `its logs have the cause under errorId ${where.errorId}`
  );
}
