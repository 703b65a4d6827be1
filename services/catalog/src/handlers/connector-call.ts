/**
 * `<prefix>.connector.<server>.call`: the dispatcher's raw call, behind the revision barrier,
 * stopped (the server sent notifications/cancelled) when the call's cancellation arrives on
 * `<prefix>.connector.<server>.cancel` or the service stops.
 */
import { type CallCancellations, type HandlerContext, secondsSince } from "@toolbus/bus";
import {
  type ConnectorCallRequest,
  type ConnectorCallResult,
  type ErrorCode,
  type McpResourceOrigin,
  WireError,
} from "@toolbus/protocol";
import { resourceUris } from "../core/resource-uris.js";
import type { CallOutcome, OwnedServer, ResourceOriginStore } from "../ports.js";

const CODE_BY_OUTCOME: Record<Exclude<CallOutcome["kind"], "ok">, ErrorCode> = {
  stale: "stale_revision",
  not_ready: "server_not_ready",
  bad_arguments: "bad_request",
  disabled: "tool_hidden",
  timeout: "timeout",
  too_large: "payload_too_large",
  // The error code set is closed: a cancelled call failed on its way to the server.
  cancelled: "transport_error",
  failed: "transport_error",
};

export function connectorCallHandler(deps: {
  connector: OwnedServer;
  /** Told of each call's outcome and seconds at the connector (`toolbus.catalog.connector.call.duration`). */
  recordCall?(outcome: CallOutcome["kind"], seconds: number): void;
  origins: ResourceOriginStore;
  /** The calls of this process their caller may cancel. */
  cancellations: CallCancellations;
  progressFor(callId: string): ((progress: Record<string, unknown>) => void) | undefined;
}) {
  return async (request: ConnectorCallRequest, ctx: HandlerContext): Promise<ConnectorCallResult> => {
    const { connector } = deps;
    ctx.span.setAttributes({ "mcp.server": connector.settings.server, "mcp.tool": request.tool });
    const onProgress = deps.progressFor(request.callId);
    const started = performance.now();
    const tracked = deps.cancellations.track(request.callId);
    const stop = eitherAborts(tracked.signal, ctx.signal);
    const outcome = await connector
      .call({
        callId: request.callId,
        tool: request.tool,
        preparedRevision: request.preparedRevision,
        signal: stop.signal,
        ...(request.threadId !== undefined ? { threadId: request.threadId } : {}),
        ...(request.requestedBy !== undefined ? { requestedBy: request.requestedBy } : {}),
        ...(request.arguments !== undefined ? { arguments: request.arguments } : {}),
        ...(request.timeoutMs !== undefined ? { timeoutMs: request.timeoutMs } : {}),
        ...(request.meta !== undefined ? { meta: request.meta } : {}),
        ...(request.clientCapabilities !== undefined
          ? { clientCapabilities: request.clientCapabilities }
          : {}),
        ...(onProgress ? { onProgress } : {}),
      })
      .finally(() => {
        stop.release();
        tracked.release();
      });
    deps.recordCall?.(outcome.kind, secondsSince(started));
    if (outcome.kind !== "ok") throw new WireError(CODE_BY_OUTCOME[outcome.kind], outcome.message);
    const uris = resourceUris(outcome.result);
    if (uris.length > 0) {
      const origins: McpResourceOrigin[] = uris.map((uri) => ({
        callId: request.callId,
        server: connector.settings.server,
        tool: request.tool,
        uri,
        ambiguousAccount: false,
      }));
      await deps.origins.record(origins).catch((error: unknown) => {
        ctx.logger.warn(
          { err: error },
          "recording resource origins failed; reads naming this call will be refused",
        );
      });
    }
    return { result: outcome.result as ConnectorCallResult["result"] };
  };
}

/**
 * A signal aborted when either is, with the first one's reason; `release` drops its listeners
 * (the service's signal lives long: one listener per call would pile up).
 */
function eitherAborts(call: AbortSignal, service: AbortSignal): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const fromCall = () => controller.abort(call.reason);
  const fromService = () => controller.abort(service.reason);
  if (call.aborted) fromCall();
  else if (service.aborted) fromService();
  call.addEventListener("abort", fromCall, { once: true });
  service.addEventListener("abort", fromService, { once: true });
  return {
    signal: controller.signal,
    release() {
      call.removeEventListener("abort", fromCall);
      service.removeEventListener("abort", fromService);
    },
  };
}
