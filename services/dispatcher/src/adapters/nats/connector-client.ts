/**
 * The raw call to a server's connector, `<prefix>.connector.<server>.call`, in its own span. It
 * watches the call's execution record meanwhile: a connector that died mid-call, or an answer
 * lost on the way, is noticed in seconds and the call asked again — which the connector's own
 * ledger answers without running the tool twice. `cancel` tells the connector to stop a call.
 */
import type { KV } from "@nats-io/kv";
import { type Bus, publishCancellation, watchedRecord, watchedRequest, withSpan } from "@toolbus/bus";
import {
  type CallToolResult,
  ConnectorCallResultSchema,
  type Subjects,
  serverKeyPrefix,
  WireError,
} from "@toolbus/protocol";
import type { ConnectorPort } from "../../ports.js";

/** Longer than any tool timeout: the connector enforces `tool_timeout_sec` and answers. */
const CONNECTOR_GRACE_MS = 5_000;
/** How long a call the connector could not take yet (and did not run) is offered again. */
const NOT_RUN_RETRY_MS = 30_000;

export function createConnectorClient(deps: {
  bus: Bus;
  subjects: Subjects;
  /** The catalog's execution records (read only). */
  executions: KV;
  toolTimeoutMs: (server: string) => number;
}): ConnectorPort {
  return {
    call(server, request, cancelled): Promise<CallToolResult> {
      return withSpan(
        "toolbus.connector.call",
        { "mcp.call_id": request.callId, "mcp.server": server, "mcp.tool": request.tool },
        async () => {
          const notRunUntil = Date.now() + Math.min(NOT_RUN_RETRY_MS, deps.toolTimeoutMs(server));
          for (let delayMs = 250; ; delayMs = Math.min(delayMs * 2, 2_000)) {
            try {
              const reply = await watchedRequest(
                deps.bus,
                deps.subjects.connectorCall(server),
                request,
                ConnectorCallResultSchema,
                {
                  timeoutMs: deps.toolTimeoutMs(server) + CONNECTOR_GRACE_MS,
                  record: watchedRecord(deps.executions, request.callId, serverKeyPrefix(server)),
                },
              );
              return reply.result;
            } catch (error) {
              // `server_unavailable` means the tool was not called (no replica serves the server, or
              // its executions ledger did not answer — a NATS node lost): asking again is safe.
              const notRun =
                error instanceof WireError && error.code === "server_unavailable" && error.retryable;
              // Cancelled meanwhile: the call it did not take stays untaken.
              if (!notRun || cancelled?.aborted || Date.now() + delayMs > notRunUntil) throw error;
            }
            await new Promise((resolve) => setTimeout(resolve, delayMs));
          }
        },
      );
    },
    cancel(server, callId, reason) {
      // Every replica serving the server hears it; the one running the call stops it.
      publishCancellation(deps.bus, deps.subjects.connectorCancel(server), { callId, reason });
    },
  };
}
