/**
 * How a toolbus process writes its logs: `pretty` (one readable line each, for a person at a
 * terminal) or `json` (one JSON object per line, for a log collector). The one rule: a
 * `--log-format` flag wins, then `LOG_FORMAT`, then whether stdout is a terminal.
 */
import { ConfigError } from "./config.js";

export const LOG_FORMATS = ["pretty", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export function chooseLogFormat(options: {
  /** `--log-format`, when given. */
  flag?: string | undefined;
  /** `LOG_FORMAT`. */
  env?: string | undefined;
  /** Whether stdout is a terminal. */
  isTty: boolean;
}): LogFormat {
  for (const [given, where] of [
    [options.flag, "--log-format"],
    [options.env, "LOG_FORMAT"],
  ] as const) {
    if (given === undefined || given.trim() === "") continue;
    const value = given.trim().toLowerCase();
    if ((LOG_FORMATS as readonly string[]).includes(value)) return value as LogFormat;
    throw new ConfigError([
      `${where}=${given} is not a log format; use ${LOG_FORMATS.join(" or ")} (the default: pretty on a terminal, json otherwise)`,
    ]);
  }
  return options.isTty ? "pretty" : "json";
}
