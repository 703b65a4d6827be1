/**
 * The closed set of wire error codes (docs/contract.md "Conventions"). Every failed reply on the
 * bus carries exactly one of these. README.md documents each; a test keeps the two in step.
 */
export const ErrorCode = {
  badRequest: "bad_request",
  unknownTool: "unknown_tool",
  toolHidden: "tool_hidden",
  serverUnavailable: "server_unavailable",
  serverNotReady: "server_not_ready",
  staleRevision: "stale_revision",
  approvalDenied: "approval_denied",
  approvalTimedOut: "approval_timed_out",
  approvalCancelled: "approval_cancelled",
  timeout: "timeout",
  transportError: "transport_error",
  payloadTooLarge: "payload_too_large",
  unauthorized: "unauthorized",
  internal: "internal",
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export const ERROR_CODES: readonly ErrorCode[] = Object.values(ErrorCode);

/** Whether a caller may retry the same request unchanged and hope for a different answer. */
export const RETRYABLE_BY_DEFAULT: Readonly<Record<ErrorCode, boolean>> = {
  bad_request: false,
  unknown_tool: false,
  tool_hidden: false,
  server_unavailable: true,
  server_not_ready: true,
  stale_revision: false,
  approval_denied: false,
  approval_timed_out: false,
  approval_cancelled: false,
  timeout: true,
  transport_error: true,
  payload_too_large: false,
  unauthorized: false,
  internal: true,
};

/**
 * A wire error raised inside a handler: the bus runtime answers it as
 * `{ok:false, error:{code, message, retryable}}` instead of `internal`.
 */
export class WireError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options?: { retryable?: boolean; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "WireError";
    this.code = code;
    this.retryable = options?.retryable ?? RETRYABLE_BY_DEFAULT[code];
  }
}
