/** MCP logging levels (RFC 5424 order) and whether a message passes a session's `logging/setLevel`. */
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

/** With no level set, every message goes to the client. */
export function passesLogLevel(level: LoggingLevel, minimum: LoggingLevel | undefined): boolean {
  return minimum === undefined || SEVERITY[level] >= SEVERITY[minimum];
}
