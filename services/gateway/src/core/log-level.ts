/**
 * MCP logging levels (RFC 5424 order) and whether a message passes the level the client chose:
 * a 2025 session's `logging/setLevel` (none set: every message), or a 2026-07-28 request's
 * `io.modelcontextprotocol/logLevel` (none named: no message at all, `"none"`).
 */
import type { LoggingLevel } from "@toolbus/protocol";

const SEVERITY: Readonly<Record<LoggingLevel, number>> = {
  debug: 0,
  info: 1,
  notice: 2,
  warning: 3,
  error: 4,
  critical: 5,
  alert: 6,
  emergency: 7,
};

/** A client's choice: a minimum level, `"none"` (no messages), or undefined (every message). */
export type LogLevelChoice = LoggingLevel | "none" | undefined;

export function passesLogLevel(level: LoggingLevel, minimum: LogLevelChoice): boolean {
  if (minimum === "none") return false;
  return minimum === undefined || SEVERITY[level] >= SEVERITY[minimum];
}

/** A 2026-07-28 request's `io.modelcontextprotocol/logLevel`: a level it names, else none. */
export function requestLogLevel(named: unknown): LogLevelChoice {
  return typeof named === "string" && Object.hasOwn(SEVERITY, named) ? (named as LoggingLevel) : "none";
}
