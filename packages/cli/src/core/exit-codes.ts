/**
 * What the CLI's exit code means (the one thing a script can rely on without parsing output),
 * and the code a finished tool call ends with.
 */
import type { ToolCallReply } from "@toolbus/protocol";

export const ExitCode = {
  ok: 0,
  /** The tool failed (isError, failed, skipped) or toolbus refused the request. */
  failed: 1,
  /** Unknown command or option, missing or malformed argument. */
  usage: 2,
  /** NATS does not answer, or no toolbus service serves the subject (nothing is running). */
  unreachable: 3,
  /** The tool's arguments are not valid JSON; nothing was called. */
  invalidArguments: 4,
  /** Ctrl-C while waiting for a reply. */
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** 0 only when the call completed and the result is not an error result. */
export function exitCodeForCall(reply: Pick<ToolCallReply, "status" | "output">): ExitCode {
  switch (reply.status) {
    case "completed":
      return reply.output.success ? ExitCode.ok : ExitCode.failed;
    case "invalid_arguments":
      return ExitCode.invalidArguments;
    case "failed":
    case "skipped":
      return ExitCode.failed;
  }
}
