/**
 * The service's root pino logger, `{service, version}` on every line and the active trace and
 * span ids when there is one, so a log line leads to its trace. Children per message add
 * `{subject, callId}` (see serve.ts).
 */
import { trace } from "@opentelemetry/api";
import { type DestinationStream, type LevelWithSilent, type Logger, pino } from "pino";
import { DEFAULT_LOG_LEVEL, LOG_LEVELS } from "./service-settings.js";

export type { Logger } from "pino";

export interface LoggerOptions {
  service: string;
  version: string;
  /** Default: `LOG_LEVEL`, else `info`. */
  level?: LevelWithSilent;
  /** Default: stdout. Tests pass a stream to read what was logged. */
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  const fromEnv = process.env.LOG_LEVEL?.trim().toLowerCase();
  const known = (LOG_LEVELS as readonly string[]).includes(fromEnv ?? "");
  const level = options.level ?? (fromEnv && known ? fromEnv : DEFAULT_LOG_LEVEL);
  const logger = pino(
    {
      level,
      base: { service: options.service, version: options.version },
      mixin() {
        const span = trace.getActiveSpan()?.spanContext();
        return span && trace.isSpanContextValid(span) ? { traceId: span.traceId, spanId: span.spanId } : {};
      },
    },
    options.destination,
  );
  if (fromEnv && !known && options.level === undefined) {
    logger.warn(
      `LOG_LEVEL=${fromEnv} is not a level; using ${DEFAULT_LOG_LEVEL}. Use one of ${LOG_LEVELS.join(", ")}`,
    );
  }
  return logger;
}
