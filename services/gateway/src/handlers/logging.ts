/** `logging/setLevel`: the minimum level of the server log messages relayed to this session. */
import type { LoggingLevel } from "@toolbus/protocol";
import type { SessionStatePort } from "../ports.js";

export function setLogLevel(
  level: LoggingLevel,
  session: Pick<SessionStatePort, "setLogLevel">,
): Record<string, never> {
  session.setLogLevel(level);
  return {};
}
