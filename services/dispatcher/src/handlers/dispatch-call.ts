/**
 * `toolbus.dispatch.call`: one model tool call, in the reference's order (docs/reference-behavior.md
 * §4, docs/contract.md "Dispatch"): parse the arguments, resolve the name in the local catalog,
 * wait for the server, check staleness, begin, approve, call the connector behind its
 * barrier, end, and project the result for the model, the hooks and the caller. The resource
 * tools take their own path (resource-tool-call.ts).
 *
 * The caller may cancel the call at any point (`<prefix>.calls.<callId>.cancel`): waiting for a
 * human, its approval request is withdrawn and the call skipped; running, its connector is told
 * to stop (the server gets `notifications/cancelled`) and the call ends with why.
 */
import { cancelReason, type HandlerContext } from "@toolbus/bus";
import {
  type ApprovalDecideRequest,
  type ApprovalDecideResult,
  type CallBeginEvent,
  callIdReusedMessage,
  DEFAULT_MODEL_TRUNCATION,
  isResourceToolName,
  type JsonValue,
  type ModelCapabilities,
  type ModelOutput,
  type ResourceToolName,
  type ToolCallReply,
  type ToolCallRequest,
  type ToolEntry,
  WireError,
} from "@toolbus/protocol";
import {
  approvalOutcome,
  cancelledWhileRunningMessage,
  checkStale,
  endStatus,
  fitBeginEvent,
  fitEndEvent,
  HOST_SERVER_LABEL,
  isCallError,
  isRecord,
  mcpAppResourceUri,
  notAnObjectMessage,
  notAvailableMessage,
  type ParsedArguments,
  parseToolArguments,
  postToolUsePayload,
  projectForModel,
  type ResultOrError,
  toolCallErrorMessage,
  USER_CANCELLED_MESSAGE,
} from "../core/index.js";
import type {
  ApprovalsPort,
  CancellationsPort,
  CatalogPort,
  ConnectorPort,
  EventsPort,
  ResourcesPort,
} from "../ports.js";
import { resourceToolCall } from "./resource-tool-call.js";

export interface CallPathDeps {
  catalog: CatalogPort;
  /** For the resource tools (`list_mcp_resources`, …), which go to the catalog, not a connector. */
  resources: ResourcesPort;
  approvals: ApprovalsPort;
  connector: ConnectorPort;
  events: EventsPort;
  cancellations: CancellationsPort;
  /** Monotonic milliseconds, for durations. */
  now(): number;
  /** Wall-clock timestamp for events. */
  timestamp(): string;
  /**
   * How long a call naming a catalog revision this replica has not seen yet waits for it
   * (the caller read a catalog a moment ahead of this copy) before it is refused.
   */
  revisionWaitMs: number;
  /** Told of each call refused as stale, and where (for `toolbus.dispatcher.stale_rejections`). */
  staleRejected?(server: string, rejectedBy: "dispatcher" | "connector"): void;
}

/** The name the model used, for messages about a tool the catalog does not have. */
function requestedName(tool: ToolCallRequest["tool"]): { tool: string; label: string } {
  if (typeof tool === "string") return { tool, label: tool };
  return { tool: tool.name, label: `${tool.namespace}/${tool.name}` };
}

/** What the model takes: the request's, with the default truncation. */
function modelCapabilities(request: ToolCallRequest): ModelCapabilities {
  return { ...request.model, truncation: request.model?.truncation ?? DEFAULT_MODEL_TRUNCATION };
}

/**
 * The answer to a callId this replica remembers for another call (another tool or other
 * arguments): refused, never the first call's answer. It publishes no events: those of the
 * callId belong to the first call.
 */
export function reusedCallIdReply(request: ToolCallRequest, catalogRevision: number): ToolCallReply {
  const message = callIdReusedMessage(request.callId);
  return {
    callId: request.callId,
    status: "failed",
    output: projectForModel({ error: message }, { wallTimeMs: 0, model: modelCapabilities(request) }),
    error: message,
    durationMs: 0,
    wallTimeMs: 0,
    catalogRevision,
  };
}

/**
 * The call path. `parsed`: the request's arguments when the caller parsed them already (the
 * service does, for the duplicate-callId check), so they are parsed once.
 */
export function dispatchCall(deps: CallPathDeps) {
  const resourceCall = resourceToolCall({
    resources: deps.resources,
    events: deps.events,
    now: deps.now,
    timestamp: deps.timestamp,
    catalogRevision: () => deps.catalog.revision,
  });
  const run = callPath(deps);
  return async (
    request: ToolCallRequest,
    ctx: HandlerContext,
    parsed: ParsedArguments = parseToolArguments(request.arguments),
  ): Promise<ToolCallReply> => {
    // The resource tools have names no catalog tool can have (flat names contain `__`).
    if (isResourceToolName(request.tool)) {
      return resourceCall(request as ToolCallRequest & { tool: ResourceToolName }, ctx, parsed);
    }
    // Tracked before anything waits, so a cancellation that comes meanwhile reaches the call.
    const tracked = deps.cancellations.track(request.callId);
    try {
      return await run(request, ctx, parsed, tracked.signal);
    } finally {
      tracked.release();
    }
  };
}

/** Resolves with the promise's value, or with `ABORTED` as soon as the signal aborts. */
const ABORTED = Symbol("aborted");
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise<T | typeof ABORTED>((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

function callPath(deps: CallPathDeps) {
  return async (
    request: ToolCallRequest,
    ctx: HandlerContext,
    parsed: ParsedArguments,
    cancelled: AbortSignal,
  ): Promise<ToolCallReply> => {
    const started = deps.now();
    const { callId } = request;
    const model = modelCapabilities(request);
    // The wall time is taken once, so the model's header and the reply's wallTimeMs agree.
    const project = (outcome: ResultOrError) => {
      const wallTimeMs = deps.now() - started;
      return { wallTimeMs, output: projectForModel(outcome, { wallTimeMs, model }) };
    };
    const ids = {
      callId,
      ...(request.threadId !== undefined ? { threadId: request.threadId } : {}),
      ...(request.turnId !== undefined ? { turnId: request.turnId } : {}),
    };

    // 1. Arguments. Invalid JSON reaches nobody and publishes no events; the model reads the
    // bare `err: <parse error>`, with no wall-time header and no result around it (§4.1).
    if (parsed.kind === "invalid_json") {
      return {
        callId,
        status: "invalid_arguments",
        wallTimeMs: deps.now() - started,
        output: { success: false, body: parsed.message },
        error: parsed.message,
        durationMs: 0,
        catalogRevision: deps.catalog.revision,
      };
    }
    // Events and approvals read "no arguments" as null; the server gets none at all.
    const argumentsValue: JsonValue = parsed.kind === "none" ? null : parsed.value;

    // A caller that read a newer catalog than this copy waits for it; one from the future is refused.
    if (request.catalogRevision !== undefined && request.catalogRevision > deps.catalog.revision) {
      const reached = await deps.catalog.waitForRevision(request.catalogRevision, deps.revisionWaitMs);
      if (!reached) {
        throw new WireError(
          "bad_request",
          `catalogRevision ${request.catalogRevision} is ahead of the catalog (revision ${deps.catalog.revision}); pass the revision that toolbus.catalog.get returned`,
        );
      }
    }

    // 2. Resolve through the catalog, never by parsing the name.
    const catalogRevision = deps.catalog.revision;
    const tool = deps.catalog.catalog.resolve(request.tool);
    const invocation = tool
      ? { server: tool.server, tool: tool.rawName, arguments: argumentsValue }
      : { server: HOST_SERVER_LABEL, tool: requestedName(request.tool).tool, arguments: argumentsValue };
    ctx.span.setAttributes({
      "mcp.server": invocation.server,
      "mcp.tool": invocation.tool,
      ...(request.requestedBy !== undefined ? { "enduser.id": request.requestedBy } : {}),
    });
    const eventFields = (): CallBeginEvent => ({
      ...ids,
      invocation,
      ...(tool?.readOnlyHint !== undefined ? { readOnlyHint: tool.readOnlyHint } : {}),
      ...appResource(deps.catalog, tool),
      ...requester(request),
      at: deps.timestamp(),
    });
    let begun = false;
    const begin = () => {
      if (begun) return;
      begun = true;
      deps.events.begin(fitBeginEvent(eventFields(), deps.events.maxEventBytes));
    };
    // Who answered the approval, once a person has: the end event names them beside the requester.
    let decidedBy: string | undefined;
    const end = (outcome: ResultOrError, durationMs: number) => {
      const fields = {
        ...eventFields(),
        ...(decidedBy !== undefined ? { decidedBy } : {}),
        status: endStatus(outcome),
        durationMs,
      };
      deps.events.end(fitEndEvent(fields, outcome, deps.events.maxEventBytes));
    };
    const route = tool ? { server: tool.server, tool: tool.rawName, hookName: tool.hookName } : {};
    // A call that does not run: begin (if not yet), a failed end with duration 0, and the message.
    const skip = (message: string, status: "skipped" | "failed" = "skipped"): ToolCallReply => {
      begin();
      end({ error: message }, 0);
      return {
        callId,
        status,
        ...route,
        ...project({ error: message }),
        error: message,
        durationMs: 0,
        catalogRevision,
      };
    };
    if (!tool || tool.exposure === "hidden") {
      const message = tool
        ? notAvailableMessage(tool.server, tool.rawName)
        : `MCP tool \`${requestedName(request.tool).label}\` is not available to the model`;
      return skip(message);
    }

    // 3. Wait for the server (bounded by its startup timeout), unless the caller gives up first.
    const entry = deps.catalog.server(tool.server);
    const ready = await unlessAborted(
      deps.catalog.waitReady(tool.server, entry?.startupTimeoutMs ?? 30_000),
      cancelled,
    );
    if (ready === ABORTED) return skip(USER_CANCELLED_MESSAGE);
    if (!ready) {
      const why = deps.catalog.server(tool.server)?.statusError;
      return skip(`MCP server '${tool.server}' is not connected${why ? `: ${why}` : ""}`, "failed");
    }

    // 4. Stale check against what the model was shown, on the freshest copy we have.
    const current = deps.catalog.catalog.resolve(request.tool) ?? tool;
    const stale = checkStale(
      {
        ...(request.toolFingerprint !== undefined ? { toolFingerprint: request.toolFingerprint } : {}),
        ...(request.catalogRevision !== undefined ? { catalogRevision: request.catalogRevision } : {}),
      },
      { fingerprint: current.fingerprint, serverRevision: current.revision },
      { server: tool.server, rawTool: tool.rawName },
    );
    if (stale.kind === "stale") {
      deps.staleRejected?.(tool.server, "dispatcher");
      return skip(stale.message);
    }

    // 5. Begin: every UI sees the call from here on, also while it waits for a human.
    begin();

    // 6. Approval; a PreToolUse hook may rewrite the input. A refused request (its callId already
    // approved or asked for another call) fails without running. Cancelled meanwhile: the request
    // put to a human is withdrawn, and the call skipped as the reference skips a cancelled one.
    if (cancelled.aborted) return skip(USER_CANCELLED_MESSAGE);
    let decision: ApprovalDecideResult;
    try {
      const deciding = deps.approvals.decide(
        approvalRequest(request, current, argumentsValue, catalogRevision),
        cancelled,
      );
      if (deciding instanceof Promise) {
        const settled = await unlessAborted(deciding, cancelled);
        if (settled === ABORTED) {
          withdrawApproval(deps.approvals, callId, cancelReason(cancelled), deciding);
          return skip(USER_CANCELLED_MESSAGE);
        }
        decision = settled;
      } else {
        decision = deciding;
      }
    } catch (error) {
      if (error instanceof WireError && error.code === "bad_request") return skip(error.message, "failed");
      throw error;
    }
    decidedBy = decision.decidedBy;
    const outcome = approvalOutcome(decision);
    if (outcome.kind === "skip") return skip(outcome.message);
    const callArguments =
      decision.updatedArguments !== undefined
        ? decision.updatedArguments
        : parsed.kind === "none"
          ? undefined
          : parsed.value;

    // 7. The wire rule: arguments, when there are any, must be an object (`null` included).
    if (callArguments !== undefined && !isRecord(callArguments)) {
      return skip(notAnObjectMessage(callArguments), "failed");
    }

    // 8. The connector call, carrying the revision this call was prepared against. Cancelled while
    // it runs: the connector is told to stop it, and the call ends with why, unless the server
    // answered first.
    if (cancelled.aborted) return skip(USER_CANCELLED_MESSAGE);
    const executionStarted = deps.now();
    const stopConnector = () => deps.connector.cancel(tool.server, callId, cancelReason(cancelled));
    cancelled.addEventListener("abort", stopConnector, { once: true });
    let result: ResultOrError;
    try {
      result = await deps.connector.call(
        tool.server,
        {
          ...ids,
          tool: tool.rawName,
          ...(callArguments !== undefined ? { arguments: callArguments } : {}),
          preparedRevision: current.revision,
          // A server isolated per principal runs the call in its requester's own instance.
          ...(request.requestedBy !== undefined ? { requestedBy: request.requestedBy } : {}),
          ...(request.clientCapabilities !== undefined
            ? { clientCapabilities: request.clientCapabilities }
            : {}),
        },
        cancelled,
      );
    } catch (error) {
      if (error instanceof WireError && error.code === "stale_revision") {
        deps.staleRejected?.(tool.server, "connector");
        return skip(error.message);
      }
      result = cancelled.aborted
        ? { error: cancelledWhileRunningMessage(tool.server, tool.rawName, cancelReason(cancelled)) }
        : { error: toolCallErrorMessage(error) };
    } finally {
      cancelled.removeEventListener("abort", stopConnector);
    }
    const durationMs = deps.now() - executionStarted;

    // 9. End.
    end(result, durationMs);

    // 10. Projections: PostToolUse may replace what the model sees; the raw result stays whole.
    const projected = project(result);
    const output = await postToolUse(deps.approvals, {
      request,
      tool,
      argumentsValue,
      decision,
      result,
      output: projected.output,
    });
    return {
      callId,
      status: endStatus(result),
      ...route,
      output,
      ...(isCallError(result) ? { error: result.error } : { result }),
      durationMs,
      wallTimeMs: projected.wallTimeMs,
      catalogRevision,
    };
  };
}

/**
 * Withdraws the approval request of a cancelled call. One not yet stored when the first withdraw
 * came (the decide was still on its way) is withdrawn once that decide stops waiting.
 */
function withdrawApproval(
  approvals: ApprovalsPort,
  callId: string,
  reason: string,
  deciding: Promise<ApprovalDecideResult>,
): void {
  void approvals.withdraw(callId, reason).then((withdrawn) => {
    if (withdrawn) return;
    const again = () => void approvals.withdraw(callId, reason);
    deciding.then(again, again);
  });
}

/** What the model sees after PostToolUse: a blocking hook's reason replaces the output. */
async function postToolUse(
  approvals: ApprovalsPort,
  call: {
    request: ToolCallRequest;
    tool: ToolEntry;
    argumentsValue: JsonValue;
    decision: ApprovalDecideResult;
    result: ResultOrError;
    output: ModelOutput;
  },
): Promise<ModelOutput> {
  const { request, tool } = call;
  if (!approvals.hasPostToolUse(tool.hookName)) return call.output;
  const payload = postToolUsePayload({
    hookName: tool.hookName,
    callId: request.callId,
    arguments: call.argumentsValue,
    ...(call.decision.updatedArguments !== undefined
      ? { rewrittenArguments: call.decision.updatedArguments }
      : {}),
    result: call.result,
  });
  const verdict = await approvals.postToolUse({
    callId: request.callId,
    hookName: tool.hookName,
    toolInput: payload.tool_input,
    toolResponse: payload.tool_response,
    ...(request.threadId !== undefined ? { threadId: request.threadId } : {}),
  });
  return verdict.block ? { success: false, body: verdict.reason } : call.output;
}

function approvalRequest(
  request: ToolCallRequest,
  tool: ToolEntry,
  argumentsValue: JsonValue,
  catalogRevision: number,
): ApprovalDecideRequest {
  return {
    callId: request.callId,
    ...(request.threadId !== undefined ? { threadId: request.threadId } : {}),
    ...(request.turnId !== undefined ? { turnId: request.turnId } : {}),
    server: tool.server,
    tool: tool.rawName,
    hookName: tool.hookName,
    arguments: argumentsValue,
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    description: tool.description,
    fingerprint: tool.fingerprint,
    catalogRevision,
    ...(request.strictAutoReview !== undefined ? { strictAutoReview: request.strictAutoReview } : {}),
    ...requester(request),
  };
}

/** Who asked, and the name they are shown by: a name without a requester names nobody. */
function requester(request: ToolCallRequest): { requestedBy?: string; requesterName?: string } {
  if (request.requestedBy === undefined) return {};
  return {
    requestedBy: request.requestedBy,
    ...(request.requesterName !== undefined ? { requesterName: request.requesterName } : {}),
  };
}

/** The MCP Apps resource of the tool, read from the raw tool's `_meta` (normalized entries drop it). */
function appResource(catalog: CatalogPort, tool: ToolEntry | undefined): { mcpAppResourceUri?: string } {
  if (!tool) return {};
  const uri = mcpAppResourceUri(catalog.rawTool(tool.server, tool.rawName)?._meta);
  return uri ? { mcpAppResourceUri: uri } : {};
}
