/**
 * The service's root pino logger, `{service, version}` on every line and the active trace and
 * span ids when there is one, so a log line leads to its trace. Children per message add
 * `{subject, callId}` (see serve.ts). JSON lines for collectors; on a terminal, one readable
 * line each (log-format.ts says which).
 */
import { trace } from "@opentelemetry/api";
import { type DestinationStream, type LevelWithSilent, type Logger, pino } from "pino";
import pretty from "pino-pretty";
import { chooseLogFormat, type LogFormat } from "./log-format.js";
import { DEFAULT_LOG_LEVEL, LOG_LEVELS } from "./service-settings.js";

export type { Logger } from "pino";

export interface LoggerOptions {
  service: string;
  version: string;
  /** Default: `LOG_LEVEL`, else `info`. */
  level?: LevelWithSilent;
  /** Default: stdout. Tests pass a stream to read what was logged. */
  destination?: DestinationStream;
  /** Default: `LOG_FORMAT`, else pretty when stdout is a terminal; JSON whenever `destination` is given. */
  format?: LogFormat;
}

/**
 * One line a person reads: time, level (coloured on a colour terminal), who said it, the
 * message, then the fields that say more; the ones on every line (version, pid, host, trace ids)
 * are left out.
 */
function prettyStdout(): DestinationStream {
  return pretty({
    destination: 1,
    sync: true,
    colorize: process.stdout.isTTY === true && process.env.NO_COLOR === undefined,
    translateTime: "SYS:HH:MM:ss",
    ignore: "pid,hostname,version,service,component,traceId,spanId,stderr",
    // A stdio server's stderr as the server wrote it, after its name.
    messageFormat: (log, messageKey) =>
      typeof log.stderr === "string"
        ? `${String(log.server)} ▸ ${log.stderr}`
        : `${String(log.component ?? log.service)}: ${String(log[messageKey])}`,
    singleLine: true,
  });
}

export function createLogger(options: LoggerOptions): Logger {
  const fromEnv = process.env.LOG_LEVEL?.trim().toLowerCase();
  const known = (LOG_LEVELS as readonly string[]).includes(fromEnv ?? "");
  const level = options.level ?? (fromEnv && known ? fromEnv : DEFAULT_LOG_LEVEL);
  const format =
    options.destination !== undefined
      ? "json"
      : (options.format ??
        chooseLogFormat({ env: process.env.LOG_FORMAT, isTty: process.stdout.isTTY === true }));
  const logger = pino(
    {
      level,
      base: { service: options.service, version: options.version },
      mixin() {
        const span = trace.getActiveSpan()?.spanContext();
        return span && trace.isSpanContextValid(span) ? { traceId: span.traceId, spanId: span.spanId } : {};
      },
    },
    options.destination ?? (format === "pretty" ? prettyStdout() : undefined),
  );
  if (fromEnv && !known && options.level === undefined) {
    logger.warn(
      `LOG_LEVEL=${fromEnv} is not a level; using ${DEFAULT_LOG_LEVEL}. Use one of ${LOG_LEVELS.join(", ")}`,
    );
  }
  return logger;
}
