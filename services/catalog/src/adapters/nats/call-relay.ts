/**
 * Relays what a server sends during a call to whoever made the call, on
 * `<prefix>.calls.<callId>.<server>.<kind>` (subjects only this server's connector may use):
 * progress and log messages as plain events, elicitations, sampling requests and a 2026-07-28
 * server's rounds of questions as held requests (a person or a model may take minutes: each send
 * is answered within its hold, and sent again under the same relayId until the tool's timeout).
 * Nobody listening means a clean decline (elicitation), empty roots, or a clean error
 * (sampling) for the server, never a hang.
 */
import { randomUUID } from "node:crypto";
import { ProtocolErrorCode } from "@modelcontextprotocol/client";
import { type Bus, heldCall } from "@toolbus/bus";
import {
  CallElicitationResultSchema,
  CallInputResultSchema,
  CallSamplingResultSchema,
  type InputRequest,
  type Subjects,
  WireError,
} from "@toolbus/protocol";
import type { z } from "zod";
import { jsonRpcError } from "../../core/mcp-errors.js";
import { formatDuration } from "../../core/startup-messages.js";
import type { ServerRequestRelay } from "../mcp/call-router.js";

/** JSON-RPC's request timeout, as MCP servers know it (-32001; the v2 SDK reports its own timeouts as `SdkError`s, never on the wire). */
const REQUEST_TIMEOUT = -32001;

const LOG_LEVELS = new Set(["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]);

export function createCallRelay(deps: {
  bus: Bus;
  subjects: Subjects;
  server: string;
  callId: string;
  /** How long a person may take to answer an elicitation, or a model a sampling request. */
  answerTimeoutMs: number;
}): ServerRequestRelay & { progress(params: Record<string, unknown>): void } {
  const { bus, subjects, server, callId } = deps;
  /** One question to the caller, held until the tool's timeout: sent again under one relayId. */
  const ask = <S extends z.ZodType>(
    kind: "elicitation" | "sampling" | "input",
    question: { request: unknown } | { requests: Record<string, InputRequest> },
    schema: S,
    what: string,
  ) => {
    const relayId = randomUUID();
    return heldCall(
      (holdMs, timeoutMs) =>
        bus.request(
          subjects.callRelay(callId, server, kind),
          { callId, server, relayId, holdMs, ...question },
          schema,
          { timeoutMs },
        ),
      { timeoutMs: deps.answerTimeoutMs, what: `${what} of tool call ${callId}` },
    );
  };
  return {
    progress(params) {
      if (typeof params.progress !== "number") return;
      bus.publish(subjects.callRelay(callId, server, "progress"), {
        callId,
        server,
        progress: params.progress,
        ...(typeof params.total === "number" ? { total: params.total } : {}),
        ...(typeof params.message === "string" ? { message: params.message } : {}),
      });
    },
    log(params) {
      bus.publish(subjects.callRelay(callId, server, "logging"), {
        callId,
        server,
        level: typeof params.level === "string" && LOG_LEVELS.has(params.level) ? params.level : "info",
        ...(typeof params.logger === "string" ? { logger: params.logger } : {}),
        data: params.data ?? null,
      });
    },
    async elicit(params) {
      try {
        return await ask("elicitation", { request: params }, CallElicitationResultSchema, "the elicitation");
      } catch (error) {
        if (error instanceof WireError && error.code === "timeout") return { action: "cancel" };
        return { action: "decline" };
      }
    },
    async sample(params) {
      try {
        return await ask("sampling", { request: params }, CallSamplingResultSchema, "the sampling request");
      } catch (error) {
        throw samplingFailure(error, callId, deps.answerTimeoutMs);
      }
    },
    async answerRound(requests) {
      try {
        return (await ask("input", { requests }, CallInputResultSchema, "the server's questions")).responses;
      } catch (error) {
        return unansweredRound(requests, error, callId, deps.answerTimeoutMs);
      }
    },
  };
}

/**
 * A round the caller did not answer (it cannot, or not in time): each question answered as a
 * 2025 server's request would be then — a decline, a cancel at the timeout, empty roots — or, for
 * a sampling request (which has no decline), the call fails saying why.
 */
function unansweredRound(
  requests: Record<string, InputRequest>,
  error: unknown,
  callId: string,
  timeoutMs: number,
): Record<string, unknown> {
  const timedOut = error instanceof WireError && error.code === "timeout";
  return Object.fromEntries(
    Object.entries(requests).map(([key, request]) => {
      switch (request.method) {
        case "elicitation/create":
          return [key, { action: timedOut ? "cancel" : "decline" }];
        case "roots/list":
          return [key, { roots: [] }];
        case "sampling/createMessage":
          throw samplingFailure(error, callId, timeoutMs);
        default:
          throw jsonRpcError(
            ProtocolErrorCode.InvalidRequest,
            `toolbus could not put the server's ${request.method} to the caller of tool call ${callId}: ${String((error as Error).message ?? error)}`,
          );
      }
    }),
  );
}

/** What the server gets when its sampling request found no answer: a JSON-RPC error saying why. */
function samplingFailure(error: unknown, callId: string, timeoutMs: number): Error {
  const context = `toolbus could not relay sampling/createMessage to the caller of tool call ${callId}`;
  if (!(error instanceof WireError))
    return jsonRpcError(ProtocolErrorCode.InternalError, `${context}: ${String(error)}`);
  switch (error.code) {
    case "timeout":
      return jsonRpcError(
        REQUEST_TIMEOUT,
        `${context}: no answer within ${formatDuration(timeoutMs)} (the tool timeout)`,
      );
    case "server_unavailable":
      return jsonRpcError(
        ProtocolErrorCode.InvalidRequest,
        `${context}: the call did not come from an MCP client that can answer sampling (nobody listens for it)`,
      );
    case "bad_request":
      return jsonRpcError(ProtocolErrorCode.InvalidRequest, `${context}: ${error.message}`);
    default:
      return jsonRpcError(ProtocolErrorCode.InternalError, `${context}: ${error.message}`);
  }
}
