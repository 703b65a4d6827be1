/**
 * Relays what a server sends during a call to whoever made the call, on
 * `<prefix>.calls.<callId>.<kind>`: progress and log messages as plain events, elicitations
 * as requests. Nobody listening means a clean decline for the server, never a hang.
 */
import type { Bus } from "@toolbus/bus";
import { CallElicitationResultSchema, type Subjects, WireError } from "@toolbus/protocol";
import type { ServerRequestRelay } from "../mcp/mcp-connection.js";

const LOG_LEVELS = new Set(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]);

export function createCallRelay(deps: {
  bus: Bus;
  subjects: Subjects;
  server: string;
  callId: string;
  /** How long a person may take to answer an elicitation. */
  answerTimeoutMs: number;
}): ServerRequestRelay & { progress(params: Record<string, unknown>): void } {
  const { bus, subjects, server, callId } = deps;
  return {
    progress(params) {
      if (typeof params.progress !== "number") return;
      bus.publish(subjects.callRelay(callId, "progress"), {
        callId,
        server,
        progress: params.progress,
        ...(typeof params.total === "number" ? { total: params.total } : {}),
        ...(typeof params.message === "string" ? { message: params.message } : {}),
      });
    },
    log(params) {
      bus.publish(subjects.callRelay(callId, "logging"), {
        callId,
        server,
        level: typeof params.level === "string" && LOG_LEVELS.has(params.level) ? params.level : "info",
        ...(typeof params.logger === "string" ? { logger: params.logger } : {}),
        data: params.data ?? null,
      });
    },
    async elicit(params) {
      try {
        return await bus.request(
          subjects.callRelay(callId, "elicitation"),
          { callId, server, request: params },
          CallElicitationResultSchema,
          { timeoutMs: deps.answerTimeoutMs },
        );
      } catch (error) {
        if (error instanceof WireError && error.code === "timeout") return { action: "cancel" };
        return { action: "decline" };
      }
    },
  };
}
