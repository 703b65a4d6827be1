/**
 * Every way a CLI run can fail before it has an answer to print, as data: the message that
 * tells the user what to do, and the exit code. Commands throw `CliError`; the entry point
 * prints the message and exits with the code.
 */
import type { ErrorCode } from "@toolbus/protocol";
import { ExitCode } from "./exit-codes.js";

export type Failure =
  /** Bad command line; the entry point prints the command's usage after the message. */
  | { kind: "usage"; message: string; command?: string }
  /** A setting from the environment is unusable (e.g. TOOLBUS_PREFIX). */
  | { kind: "config"; message: string }
  | { kind: "nats_unreachable"; natsUrl: string; reason: string }
  /** NATS answered but refused the CLI's credentials (or wants some). */
  | { kind: "nats_refused"; natsUrl: string; credentials: string | undefined; reason: string }
  /** NATS at `natsUrl` answered, but no service listens on the subject there (under `prefix`). */
  | { kind: "no_responders"; subject: string; prefix: string; natsUrl: string }
  /** NATS at `natsUrl` does not let the CLI's identity use a subject of `prefix` (or its inbox). */
  | { kind: "not_permitted"; message: string; prefix: string; natsUrl: string }
  | { kind: "timeout"; subject: string; timeoutMs: number; hint?: string }
  /** The service answered with an error envelope, or the request could not be sent. */
  | { kind: "request_failed"; subject: string; code: ErrorCode; message: string }
  | { kind: "start_unavailable"; message: string }
  /** A command's own work failed; the message says what and what to do. */
  | { kind: "failed"; message: string }
  | { kind: "interrupted"; message: string };

export class CliError extends Error {
  readonly failure: Failure;

  constructor(failure: Failure) {
    super(failureMessage(failure));
    this.name = "CliError";
    this.failure = failure;
  }
}

export function exitCodeOf(failure: Failure): ExitCode {
  switch (failure.kind) {
    case "usage":
    case "config":
      return ExitCode.usage;
    case "nats_unreachable":
    case "nats_refused":
    case "no_responders":
    case "not_permitted":
      return ExitCode.unreachable;
    case "timeout":
    case "request_failed":
    case "start_unavailable":
    case "failed":
      return ExitCode.failed;
    case "interrupted":
      return ExitCode.interrupted;
  }
}

const START_HINT = "Start toolbus with `pnpm start` in the toolbus checkout (or `toolbus start`)";

export function failureMessage(failure: Failure): string {
  switch (failure.kind) {
    case "usage":
    case "config":
    case "start_unavailable":
    case "failed":
    case "interrupted":
      return failure.message;
    case "nats_unreachable":
      return (
        `cannot reach NATS at ${failure.natsUrl} (${failure.reason}). ${START_HINT}, ` +
        "or set NATS_URL to the address of a running nats-server."
      );
    case "nats_refused":
      return failure.credentials === undefined
        ? `NATS at ${failure.natsUrl} wants credentials (${failure.reason}). In the project that runs ` +
            "`toolbus start`, the CLI finds its identity itself; elsewhere set NATS_NKEY_FILE to the cli.nk " +
            "that `toolbus nats-config` wrote."
        : `NATS at ${failure.natsUrl} refused the CLI's identity (${failure.credentials}: ${failure.reason}). ` +
            "Use the cli.nk that `toolbus nats-config` wrote for this server's config.";
    case "no_responders": {
      const service = serviceOf(failure.prefix, failure.subject);
      return (
        `nothing answers on ${failure.subject} at ${failure.natsUrl}: no toolbus ${service} service ` +
        `runs there under the prefix ${failure.prefix}. ${START_HINT}, or set NATS_URL to the NATS ` +
        "your toolbus uses (and TOOLBUS_PREFIX, if it runs under another prefix)."
      );
    }
    case "not_permitted":
      // Its identity's permissions follow the prefix toolbus runs under: another prefix is refused.
      return (
        `${failure.message} (at ${failure.natsUrl}, under the prefix ${failure.prefix}). If toolbus runs ` +
        "there under another prefix, set TOOLBUS_PREFIX to it; otherwise use the cli.nk that " +
        "`toolbus nats-config` wrote for that NATS (NATS_NKEY_FILE)."
      );
    case "timeout":
      return (
        `no reply on ${failure.subject} within ${formatSeconds(failure.timeoutMs)} s` +
        `${failure.hint ? `; ${failure.hint}` : ""}. Raise --timeout to wait longer.`
      );
    case "request_failed":
      return `${failure.message} (${failure.code})`;
  }
}

/** The service that serves a subject: `<prefix>.catalog.get` → `catalog`. */
export function serviceOf(prefix: string, subject: string): string {
  const rest = subject.startsWith(`${prefix}.`) ? subject.slice(prefix.length + 1) : subject;
  const first = rest.split(".")[0] ?? "";
  const services: Record<string, string> = {
    catalog: "catalog",
    connector: "catalog",
    dispatch: "dispatcher",
    approvals: "approvals",
    memory: "memory",
  };
  return services[first] ?? "toolbus";
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1);
}
