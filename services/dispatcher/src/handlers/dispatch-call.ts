/**
 * `toolbus.dispatch.call`: one model tool call, in the reference's order (codex-mcp-behavior.md
 * §4, CONTRACT.md "Dispatch"): parse the arguments, resolve the name in the local catalog,
 * wait for the server, check staleness, begin, approve, call the connector behind its
 * barrier, end, and project the result for the model, the hooks and the caller.
 */
import type { HandlerContext } from "@toolbus/bus";
import {
  type ApprovalDecideRequest,
  type ApprovalDecideResult,
  type CallBeginEvent,
  type CallEndEvent,
  type CallToolResult,
  DEFAULT_MODEL_TRUNCATION,
  type ToolCallReply,
  type ToolCallRequest,
  type ToolEntry,
  WireError,
} from "@toolbus/protocol";
import type { CatalogReplica } from "../adapters/nats/catalog-replica.js";
import {
  approvalOutcome,
  checkStale,
  endStatus,
  eventResultCopy,
  isCallError,
  mcpAppResourceUri,
  notAvailableMessage,
  parseToolArguments,
  postToolUsePayload,
  projectForModel,
  type ResultOrError,
  toolCallErrorMessage,
} from "../core/index.js";

export interface ApprovalsPort {
  decide(request: ApprovalDecideRequest): Promise<ApprovalDecideResult>;
  /** Whether a PostToolUse hook matches, so the round trip is paid only when it can matter. */
  hasPostToolUse(hookName: string): boolean;
  postToolUse(request: {
    callId: string;
    hookName: string;
    toolInput: unknown;
    toolResponse: CallToolResult;
    threadId?: string;
  }): Promise<{ block: boolean; reason?: string }>;
}

export interface ConnectorPort {
  /** The raw call; throws `WireError` (`stale_revision`, `timeout`, …) when it did not run or failed. */
  call(
    server: string,
    request: {
      callId: string;
      threadId?: string;
      tool: string;
      arguments?: Record<string, unknown>;
      preparedRevision: number;
    },
  ): Promise<CallToolResult>;
}

export interface EventsPort {
  begin(event: CallBeginEvent): void;
  end(event: CallEndEvent): void;
}

export interface CallPathDeps {
  catalog: CatalogReplica;
  approvals: ApprovalsPort;
  connector: ConnectorPort;
  events: EventsPort;
  /** Monotonic milliseconds, for durations. */
  now(): number;
  /** Wall-clock timestamp for events. */
  timestamp(): string;
}

/** The name the model used, for messages about a tool the catalog does not have. */
function requestedName(tool: ToolCallRequest["tool"]): { server: string; tool: string; label: string } {
  if (typeof tool === "string") return { server: "toolbus", tool, label: tool };
  return { server: "toolbus", tool: tool.name, label: `${tool.namespace}/${tool.name}` };
}

export function dispatchCall(deps: CallPathDeps) {
  return async (request: ToolCallRequest, ctx: HandlerContext): Promise<ToolCallReply> => {
    const started = deps.now();
    const { callId } = request;
    const model = request.model ?? {};
    const projection = () => ({
      wallTimeMs: deps.now() - started,
      model: {
        ...(model.images !== undefined ? { images: model.images } : {}),
        ...(model.audio !== undefined ? { audio: model.audio } : {}),
        truncation: model.truncation ?? DEFAULT_MODEL_TRUNCATION,
      },
    });
    const ids = {
      callId,
      ...(request.threadId !== undefined ? { threadId: request.threadId } : {}),
      ...(request.turnId !== undefined ? { turnId: request.turnId } : {}),
    };
    ctx.span.setAttribute("mcp.call_id", callId);

    // 1. Arguments. Invalid JSON reaches nobody and publishes no events.
    const parsed = parseToolArguments(request.arguments);
    if (parsed.kind === "invalid_json") {
      const output = projectForModel({ error: parsed.message }, projection());
      return {
        callId,
        status: "invalid_arguments",
        output,
        error: parsed.message,
        durationMs: 0,
        wallTimeMs: deps.now() - started,
        catalogRevision: deps.catalog.revision,
      };
    }
    const argumentsValue = parsed.kind === "none" ? null : parsed.value;

    // 2. Resolve through the catalog, never by parsing the name.
    const catalogRevision = deps.catalog.revision;
    const tool = deps.catalog.catalog.resolve(request.tool);
    const identity = tool
      ? { server: tool.server, tool: tool.rawName }
      : { server: requestedName(request.tool).server, tool: requestedName(request.tool).tool };
    ctx.span.setAttributes({ "mcp.server": identity.server, "mcp.tool": identity.tool });
    const beginEvent: CallBeginEvent = {
      ...ids,
      invocation: { server: identity.server, tool: identity.tool, arguments: argumentsValue },
      ...(tool?.readOnlyHint !== undefined ? { readOnlyHint: tool.readOnlyHint } : {}),
      ...appUri(tool),
      at: deps.timestamp(),
    };
    let begun = false;
    const begin = () => {
      if (begun) return;
      begun = true;
      deps.events.begin({ ...beginEvent, at: deps.timestamp() });
    };
    const skip = (message: string, status: "skipped" | "failed" = "skipped"): ToolCallReply => {
      begin();
      deps.events.end({
        ...beginEvent,
        at: deps.timestamp(),
        status: "failed",
        durationMs: 0,
        result: { err: message },
      });
      return {
        callId,
        status,
        ...(tool ? { server: tool.server, tool: tool.rawName, hookName: tool.hookName } : {}),
        output: projectForModel({ error: message }, projection()),
        error: message,
        durationMs: 0,
        wallTimeMs: deps.now() - started,
        catalogRevision,
      };
    };
    if (!tool || tool.exposure === "hidden") {
      const message = tool
        ? notAvailableMessage(tool.server, tool.rawName)
        : `MCP tool \`${requestedName(request.tool).label}\` is not available to the model`;
      return skip(message);
    }

    // 3. Wait for the server (bounded by its startup timeout).
    const entry = deps.catalog.server(tool.server);
    const ready = await deps.catalog.waitReady(tool.server, entry?.startupTimeoutMs ?? 30_000);
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
    if (stale.kind === "stale") return skip(stale.message);

    // 5. Begin: every UI sees the call from here on, also while it waits for a human.
    begin();

    // 6. Approval.
    let callArguments: unknown = argumentsValue;
    const decision = await deps.approvals.decide(
      approvalRequest(request, current, argumentsValue, catalogRevision),
    );
    const outcome = approvalOutcome(decision);
    if (outcome.kind === "skip") return skip(outcome.message);
    if (decision.updatedArguments !== undefined) callArguments = decision.updatedArguments;

    // 7. The wire rule: arguments must be an object.
    if (callArguments !== null && (typeof callArguments !== "object" || Array.isArray(callArguments))) {
      return skip(`MCP tool arguments must be a JSON object, got ${JSON.stringify(callArguments)}`, "failed");
    }

    // 8. The connector call, carrying the revision this call was prepared against.
    const executionStarted = deps.now();
    let result: ResultOrError;
    try {
      // The protocol's CallToolResult keeps unknown content blocks; the core projects them as JSON.
      result = (await deps.connector.call(tool.server, {
        ...ids,
        tool: tool.rawName,
        ...(callArguments !== null ? { arguments: callArguments as Record<string, unknown> } : {}),
        preparedRevision: current.revision,
      })) as ResultOrError;
    } catch (error) {
      if (error instanceof WireError && error.code === "stale_revision") return skip(error.message);
      result = { error: toolCallErrorMessage(error) };
    }
    const durationMs = deps.now() - executionStarted;

    // 9. End.
    const status = endStatus(result);
    deps.events.end({
      ...beginEvent,
      at: deps.timestamp(),
      status,
      durationMs,
      result: eventResultCopy(result) as CallEndEvent["result"],
    });

    // 10. Projections: PostToolUse may replace what the model sees; the raw result stays whole.
    let output = projectForModel(result, projection());
    if (deps.approvals.hasPostToolUse(tool.hookName)) {
      const payload = postToolUsePayload({
        hookName: tool.hookName,
        callId,
        arguments: argumentsValue,
        ...(decision.updatedArguments !== undefined ? { rewrittenArguments: decision.updatedArguments } : {}),
        result,
      });
      const verdict = await deps.approvals.postToolUse({
        callId,
        hookName: tool.hookName,
        toolInput: payload.tool_input,
        toolResponse: payload.tool_response as CallToolResult,
        ...(request.threadId !== undefined ? { threadId: request.threadId } : {}),
      });
      if (verdict.block) output = { success: false, body: verdict.reason ?? "blocked by a PostToolUse hook" };
    }
    return {
      callId,
      status,
      server: tool.server,
      tool: tool.rawName,
      hookName: tool.hookName,
      output: output as ToolCallReply["output"],
      ...(isCallError(result) ? { error: result.error } : { result: result as CallToolResult }),
      durationMs,
      wallTimeMs: deps.now() - started,
      catalogRevision,
    };
  };
}

function approvalRequest(
  request: ToolCallRequest,
  tool: ToolEntry,
  argumentsValue: unknown,
  catalogRevision: number,
): ApprovalDecideRequest {
  return {
    callId: request.callId,
    ...(request.threadId !== undefined ? { threadId: request.threadId } : {}),
    ...(request.turnId !== undefined ? { turnId: request.turnId } : {}),
    server: tool.server,
    tool: tool.rawName,
    hookName: tool.hookName,
    arguments: (argumentsValue ?? null) as ApprovalDecideRequest["arguments"],
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    description: tool.description,
    fingerprint: tool.fingerprint,
    catalogRevision,
    ...(request.strictAutoReview !== undefined ? { strictAutoReview: request.strictAutoReview } : {}),
  };
}

function appUri(tool: ToolEntry | undefined): { mcpAppResourceUri?: string } {
  if (!tool) return {};
  const meta = (tool as { _meta?: unknown })._meta;
  const uri = mcpAppResourceUri(meta as never);
  return uri ? { mcpAppResourceUri: uri } : {};
}
