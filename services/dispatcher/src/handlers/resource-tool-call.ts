/**
 * A resource tool call (docs/reference-behavior.md §8): `list_mcp_resources`,
 * `list_mcp_resource_templates` or `read_mcp_resource` sent to `toolbus.dispatch.call`, in the
 * reference's order: parse the arguments (a failure publishes no events), begin, ask the
 * catalog's resource subjects, end, and give the model the payload's JSON truncated to
 * policy × 1.2. No approval: reading what servers offer as context runs nothing.
 */
import type { HandlerContext } from "@toolbus/bus";
import {
  type CallBeginEvent,
  type McpInvocation,
  ResourceToolName,
  ServerNameSchema,
  type ToolCallReply,
  type ToolCallRequest,
  WireError,
} from "@toolbus/protocol";
import {
  CURSOR_WITHOUT_SERVER,
  endStatus,
  fitBeginEvent,
  fitEndEvent,
  HOST_SERVER_LABEL,
  listPayload,
  type ParsedArguments,
  parseListResourcesArgs,
  parseReadResourceArgs,
  type ResultOrError,
  readPayload,
  resourceFailure,
  resourceToolOutput,
  templatesPayload,
  unknownServerMessage,
} from "../core/index.js";
import type { EventsPort, ResourcesPort } from "../ports.js";

export interface ResourceToolDeps {
  resources: ResourcesPort;
  events: EventsPort;
  /** Monotonic milliseconds, for durations. */
  now(): number;
  /** Wall-clock timestamp for events. */
  timestamp(): string;
  /** The catalog revision the reply reports. */
  catalogRevision(): number;
}

/** The call to make: the payload, or the message of a call refused before the catalog saw it. */
type Call = { server?: string; run(): Promise<{ payload: object } | { error: string }> };

export function resourceToolCall(deps: ResourceToolDeps) {
  return async (
    request: ToolCallRequest & { tool: ResourceToolName },
    ctx: HandlerContext,
    parsed: ParsedArguments,
  ): Promise<ToolCallReply> => {
    const started = deps.now();
    const tool = request.tool;
    const catalogRevision = deps.catalogRevision();
    const ids = {
      callId: request.callId,
      ...(request.threadId !== undefined ? { threadId: request.threadId } : {}),
      ...(request.turnId !== undefined ? { turnId: request.turnId } : {}),
    };

    // 1. Arguments: a failure here is the model's to fix, and nothing begins.
    const prepared = prepare(tool, parsed, deps.resources);
    if (!prepared.ok) {
      return {
        callId: request.callId,
        status: "invalid_arguments",
        tool,
        output: { success: false, body: prepared.message },
        error: prepared.message,
        durationMs: 0,
        wallTimeMs: deps.now() - started,
        catalogRevision,
      };
    }
    const { call, invocation } = prepared;
    ctx.span.setAttributes({ "mcp.server": invocation.server, "mcp.tool": tool });

    // 2. Begin.
    const fields = (): CallBeginEvent => ({ ...ids, invocation, at: deps.timestamp() });
    deps.events.begin(fitBeginEvent(fields(), deps.events.maxEventBytes));

    // 3. The catalog's answer, as the payload's JSON text, or the failure's message.
    const executionStarted = deps.now();
    let outcome: { text: string } | { error: string };
    try {
      const answer = await call.run();
      outcome = "payload" in answer ? { text: JSON.stringify(answer.payload) } : answer;
    } catch (error) {
      if (!(error instanceof WireError)) ctx.logger.error({ err: error }, "a resource tool call failed");
      outcome = { error: resourceFailure(tool, error instanceof Error ? error.message : String(error)) };
    }
    const durationMs = deps.now() - executionStarted;

    // 4. End: the event's copy is the whole text (capped like any result), the model's is truncated.
    const result: ResultOrError =
      "text" in outcome ? { content: [{ type: "text", text: outcome.text }], isError: false } : outcome;
    deps.events.end(
      fitEndEvent({ ...fields(), status: endStatus(result), durationMs }, result, deps.events.maxEventBytes),
    );
    const route = call.server !== undefined ? { server: call.server } : {};
    if ("error" in outcome) {
      return {
        callId: request.callId,
        status: "failed",
        ...route,
        tool,
        output: { success: false, body: outcome.error },
        error: outcome.error,
        durationMs,
        wallTimeMs: deps.now() - started,
        catalogRevision,
      };
    }
    return {
      callId: request.callId,
      status: "completed",
      ...route,
      tool,
      output: resourceToolOutput(outcome.text, request.model),
      durationMs,
      wallTimeMs: deps.now() - started,
      catalogRevision,
    };
  };
}

/** The parsed arguments as the call to make and the invocation its events name. */
function prepare(
  tool: ResourceToolName,
  parsed: ParsedArguments,
  resources: ResourcesPort,
): { ok: true; call: Call; invocation: McpInvocation } | { ok: false; message: string } {
  if (tool === ResourceToolName.readResource) {
    const args = parseReadResourceArgs(parsed);
    if (!args.ok) return args;
    const { server, uri } = args.value;
    return {
      ok: true,
      invocation: { server: eventServer(server), tool, arguments: args.value.arguments },
      call: {
        ...(isServerName(server) ? { server } : {}),
        run: async () =>
          isServerName(server)
            ? { payload: readPayload(await resources.read({ server, uri })) }
            : { error: resourceFailure(tool, unknownServerMessage(server)) },
      },
    };
  }
  const args = parseListResourcesArgs(tool, parsed);
  if (!args.ok) return args;
  const { server, cursor } = args.value;
  const page = { ...(server !== undefined ? { server } : {}), ...(cursor !== undefined ? { cursor } : {}) };
  return {
    ok: true,
    invocation: {
      server: server === undefined ? HOST_SERVER_LABEL : eventServer(server),
      tool,
      arguments: args.value.arguments,
    },
    call: {
      ...(server !== undefined && isServerName(server) ? { server } : {}),
      run: async () => {
        if (cursor !== undefined && server === undefined) return { error: CURSOR_WITHOUT_SERVER };
        if (server !== undefined && !isServerName(server)) {
          return { error: resourceFailure(tool, unknownServerMessage(server)) };
        }
        return {
          payload:
            tool === ResourceToolName.listResources
              ? listPayload(server, await resources.list(page))
              : templatesPayload(server, await resources.templates(page)),
        };
      },
    },
  };
}

function isServerName(server: string): boolean {
  return ServerNameSchema.safeParse(server).success;
}

/** A name no server can have is not put in the events (they carry server names only). */
function eventServer(server: string): string {
  return isServerName(server) ? server : HOST_SERVER_LABEL;
}
