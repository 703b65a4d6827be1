/**
 * `tools/call`: the exposed name looked up in the table (never parsed), the call sent through
 * `toolbus.dispatch.call` with the fingerprint and revision this client was shown and the call's
 * thread, in the call's span (the root of its trace, or a child of the client's: call-trace.ts),
 * and while it runs: the server's progress, log messages, elicitations and sampling requests
 * relayed to the client, and the call's approval put to the client as an elicitation when it can
 * answer one (unless `elicit_approvals` is off), answered in the name of the session's principal.
 * An elicitation still open when the approval is answered elsewhere, or when the call ends, is
 * cancelled; one the client answered never is. A client that cancels the call
 * (notifications/cancelled) or goes away cancels it end to end, and only its own: its pending
 * approval is withdrawn, or its running tool stopped. The resource tools, when offered, go to the
 * dispatcher under their own names.
 *
 * A 2026-07-28 server asks its questions in rounds (`input_required`, under its own keys): a
 * 2025 client is put each question as a request (roots it is not asked: they are not the
 * server's), a 2026-07-28 client the round as it is.
 *
 * A 2026-07-28 client cannot be asked anything in the middle of a request (MRTR): an approval it
 * may answer, or its server's questions, end the request instead (`client.handBack`,
 * `input_required`) while the call waits in the dispatcher, and the client's answer, sent with
 * the call again, resumes it (`resumeCall`) on whichever replica it reaches: the dispatcher joins
 * the same call id. The replica that handed a server's questions back keeps answering its
 * connector "not yet" until the answers come (`client.awaitAnswer`); the replica resuming the
 * call answers it too, so whichever the connector asks next has them.
 */
import { propagation, type Span, trace } from "@opentelemetry/api";
import { cancelReason, type Logger, markFailed } from "@toolbus/bus";
import {
  type ApprovalRequest,
  type CallElicitationRequest,
  type CallElicitationResult,
  type CallInputRequest,
  type CallInputResult,
  type CallSamplingRequest,
  type CallSamplingResult,
  CallSamplingResultSchema,
  ElicitationParamsSchema,
  MISSING_CLIENT_CAPABILITY_CODE,
  type ResourceToolName,
  SamplingParamsSchema,
  type ToolCallRequest,
  WireError,
} from "@toolbus/protocol";
import { clientTraceContext, withCallSpan } from "../call-trace.js";
import { mayAnswerApproval, requesterOf } from "../core/approval-authority.js";
import { approvalChoice, approvalElicitation } from "../core/approval-elicitation.js";
import { type McpCallResult, mcpCallResult, refusedForCapabilities } from "../core/call-result.js";
import {
  type ClientQuestion,
  ELICITATION_KEY,
  elicitationAnswer,
  type RelayedRound,
  SAMPLING_KEY,
  singleRound,
} from "../core/held-calls.js";
import { JsonRpcCode } from "../core/jsonrpc-errors.js";
import { passesLogLevel } from "../core/log-level.js";
import { supportsElicitation, supportsSampling } from "../core/session-record.js";
import {
  type ClientChannel,
  type GatewayPorts,
  type HandedBack,
  type HeldCall,
  RequestFailure,
} from "../ports.js";

export interface ToolCallDeps {
  ports: Pick<GatewayPorts, "catalog" | "dispatch" | "relay" | "approvals" | "calls" | "newCallId">;
  logger: Logger;
  /** How long the client may take to answer an elicitation (approval or relayed). */
  answerTimeoutMs: number;
  /**
   * Put the call's approval to this client when it can answer a form elicitation (the
   * reference's way). Off: only approvers decide, through the inbox, `/v1/approvals` or the CLI.
   */
  elicitApprovals: boolean;
  /** `[approvals] self_approve`: whether a caller may answer its own call's approval. */
  selfApprove: boolean;
}

export async function callTool(
  params: { name: string; arguments?: Record<string, unknown> | undefined },
  client: ClientChannel,
  deps: ToolCallDeps,
): Promise<McpCallResult | HandedBack> {
  const { ports } = deps;
  const state = await ports.catalog.current();
  const resourceTool = state.resourceTools.find((name) => name === params.name);
  if (resourceTool) return callResourceTool(resourceTool, params.arguments, client, deps);
  const entry = state.table.resolve(params.name);
  if (!entry) {
    throw new RequestFailure(
      JsonRpcCode.invalidParams,
      `Unknown tool: ${params.name}. It is not in the toolbus catalog (revision ${state.revision}); call tools/list for the current names`,
    );
  }
  const callId = ports.newCallId();
  const request: ToolCallRequest = {
    callId,
    threadId: client.threadId,
    tool: { namespace: entry.callableNamespace, name: entry.callableName },
    arguments: params.arguments === undefined ? "" : JSON.stringify(params.arguments),
    toolFingerprint: entry.fingerprint,
    // What this client can answer: a 2026-07-28 server asks only that.
    clientCapabilities: client.capabilities as ToolCallRequest["clientCapabilities"],
    ...requesterOf(client),
    ...(client.listedRevision !== undefined ? { catalogRevision: client.listedRevision } : {}),
  };
  return runInSpan(
    { request, server: entry.server, tool: entry.rawName, exposedName: params.name },
    client,
    deps,
  );
}

/**
 * A call handed back to its client (`HeldCall`), resumed after the client answered: the same
 * request again, so the dispatcher joins the call it holds (its reply, or its next question), in
 * the call's own trace.
 */
export function resumeCall(
  held: HeldCall,
  client: ClientChannel,
  deps: ToolCallDeps,
): Promise<McpCallResult | HandedBack> {
  return runInSpan(held, { ...client, traceContext: clientTraceContext({ meta: held.traceContext }) }, deps);
}

function runInSpan(
  held: Omit<HeldCall, "traceContext">,
  client: ClientChannel,
  deps: ToolCallDeps,
): Promise<McpCallResult | HandedBack> {
  const facts = { callId: held.request.callId, server: held.server, tool: held.tool };
  const principal = { principal: held.request.requestedBy };
  return withCallSpan({ api: "mcp", parent: client.traceContext, ...facts, ...principal }, (span) =>
    runCall(held, client, deps, deps.logger.child(facts), span),
  );
}

/** The resolved call, run in its span: relays and approvals listened to while the dispatcher answers. */
async function runCall(
  /** `server`: the server the call's tool belongs to; only its connector's relays reach this call. */
  call: Omit<HeldCall, "traceContext">,
  client: ClientChannel,
  deps: ToolCallDeps,
  logger: Logger,
  span: Span,
): Promise<McpCallResult | HandedBack> {
  const { ports } = deps;
  const { request, server, exposedName } = call;
  const { callId } = request;
  const elicit = (payload: Record<string, unknown>, signal?: AbortSignal) =>
    client.elicit(payload, {
      timeoutMs: deps.answerTimeoutMs,
      signal: signal ? AbortSignal.any([signal, client.signal]) : client.signal,
    });

  /** Set once the call is handed back to its client: its request is over, nothing more goes to it. */
  let handedOff = false;
  /** The answers a handed-back round waits for; the relay stays open until they come. */
  let awaited: Promise<unknown> | undefined;
  let handBack: ((question: ClientQuestion) => void) | undefined;
  const handedBack =
    client.handBack === undefined
      ? undefined
      : new Promise<ClientQuestion>((resolve) => {
          handBack = resolve;
        });
  /** A server's round handed back to a 2026-07-28 client; undefined: no answer in time. */
  const askRound = (round: RelayedRound): Promise<Record<string, unknown> | undefined> => {
    // This very request brings the answers (the call resumed).
    if (client.answered?.relayId === round.relayId) return Promise.resolve(client.answered.responses);
    const answer = client.awaitAnswer?.(callId, round.relayId) ?? Promise.resolve(undefined);
    awaited = answer;
    const question = { kind: "input" as const, relayed: round };
    // A question after the call became a task is kept on the task; before, it ends the request.
    if (handedOff) void client.laterQuestion?.(question);
    else handBack?.(question);
    return answer;
  };
  const elicitationSink = elicitationRelay(client, elicit, logger, async (relayed) => {
    const responses = await askRound(singleRound(relayed, "elicitation/create", relayed.request));
    return elicitationAnswer(responses?.[ELICITATION_KEY]) ?? { action: "cancel" };
  });
  /** A 2025 server's sampling request handed back to a 2026-07-28 client, as a round of one. */
  const handSamplingBack = async (relayed: CallSamplingRequest & { relayId: string }) => {
    const responses = await askRound(singleRound(relayed, "sampling/createMessage", relayed.request));
    const answer = CallSamplingResultSchema.safeParse(responses?.[SAMPLING_KEY]);
    if (answer.success) return answer.data;
    throw new WireError(
      "timeout",
      `the MCP client did not answer ${relayed.server}'s sampling/createMessage within ${deps.answerTimeoutMs / 1000} s`,
      { retryable: false },
    );
  };
  const stopRelay = ports.relay.open(callId, server, {
    progress(event) {
      if (client.progressToken === undefined || handedOff) return;
      void client.notify({
        method: "notifications/progress",
        params: {
          progressToken: client.progressToken,
          progress: event.progress,
          ...(event.total !== undefined ? { total: event.total } : {}),
          ...(event.message !== undefined ? { message: event.message } : {}),
        },
      });
    },
    logging(event) {
      if (handedOff || !passesLogLevel(event.level, client.logLevel)) return;
      void client.notify({
        method: "notifications/message",
        params: {
          level: event.level,
          ...(event.logger !== undefined ? { logger: event.logger } : {}),
          data: event.data,
        },
      });
    },
    ...(elicitationSink ? { elicitation: elicitationSink } : {}),
    sampling: (relayed) => relaySampling(relayed, client, deps.answerTimeoutMs, logger, handSamplingBack),
    // A 2025 client that can answer neither elicitations nor sampling is not listened for: the
    // connector, finding no one, answers the round as this would (declines, empty roots).
    ...(client.handBack !== undefined
      ? { input: (relayed: CallInputRequest) => handRoundBack(relayed, askRound, deps.answerTimeoutMs) }
      : elicitationSink !== undefined || supportsSampling(client.capabilities)
        ? {
            input: (relayed: CallInputRequest) =>
              answerQuestionByQuestion(relayed, client, elicit, deps.answerTimeoutMs, logger),
          }
        : {}),
  });

  const approvalAsks = new Map<string, AbortController>();
  const stopApprovals = ports.approvals.watch(callId, {
    pending(approval) {
      if (client.signal.aborted) return;
      if (!deps.elicitApprovals || !supportsElicitation(client.capabilities, "form")) return;
      // Only to a caller that may answer it: one who may approve, and not its own call unless allowed.
      if (!mayAnswerApproval(client.caller, approval, deps.selfApprove)) return;
      if (handBack) return handBack({ kind: "approval", approval });
      const asked = new AbortController();
      approvalAsks.set(approval.requestId, asked);
      void askApproval(
        approval,
        () => elicit(approvalElicitation(approval), asked.signal),
        client.principal,
        deps,
        logger,
      );
    },
    resolved(requestId) {
      approvalAsks.get(requestId)?.abort(new Error("the approval was answered elsewhere"));
      approvalAsks.delete(requestId);
    },
  });
  const finished = ports.calls.started(callId, client.principal);
  const cleanup = () => {
    // A handed-back elicitation keeps its relay until its answer comes (or its wait ends).
    if (awaited) void awaited.finally(stopRelay);
    else stopRelay();
    stopApprovals();
    // A question still open when the call ends is moot: decided elsewhere (the call's answer can
    // beat the `resolved` event, a core NATS message that may never come), or the call failed.
    for (const asked of approvalAsks.values()) {
      asked.abort(new Error("the tool call no longer waits for this approval"));
    }
    approvalAsks.clear();
    finished();
  };

  // Stops this replica waiting for a call handed back to its client (the dispatcher holds it).
  const handedOver = new AbortController();
  const dispatched = ports.dispatch.call(request, { signal: handedOver.signal });
  // A client that takes tasks gets one once the call runs this long.
  const slow =
    client.taskAfterMs === undefined
      ? undefined
      : setTimeout(() => handBack?.({ kind: "running" }), client.taskAfterMs);
  let cleanupLater = false;
  try {
    const outcome = await Promise.race([
      dispatched,
      abortion(client.signal),
      ...(handedBack ? [handedBack.then((question) => ({ handBack: question }))] : []),
    ]);
    if (!("handBack" in outcome)) {
      // A 2026-07-28 client gets its server's refusal as the server gave it (-32021).
      const refused = client.handBack === undefined ? undefined : refusedForCapabilities(outcome);
      if (refused) {
        throw new RequestFailure(MISSING_CLIENT_CAPABILITY_CODE, refused.message, {
          requiredCapabilities: refused.requiredCapabilities,
        });
      }
      return mcpCallResult(outcome);
    }
    handedOff = true;
    const traceContext: Record<string, string> = {};
    propagation.inject(trace.setSpan(client.traceContext, span), traceContext);
    logger.info({ question: outcome.handBack.kind }, "handed the call back to its client");
    const handed = await (client.handBack as NonNullable<ClientChannel["handBack"]>)(
      { ...call, traceContext },
      outcome.handBack,
    );
    if (handed.resultType === "task") {
      // A task: this replica follows the call to its end, its server's questions kept on the task.
      cleanupLater = true;
      void dispatched.then(cleanup, cleanup);
    } else {
      handedOver.abort(new Error("the call was handed back to its client"));
      dispatched.catch(() => undefined);
    }
    return handed;
  } catch (error) {
    if (client.signal.aborted) {
      cleanupLater = true;
      const reason = cancelReason(client.signal);
      logger.info({ reason }, "the MCP client cancelled the call or went away; cancelling it");
      // The dispatcher running it withdraws its approval or stops its tool, and answers soon.
      ports.calls.cancel(callId, reason);
      void dispatched.then(cleanup, cleanup);
      throw new RequestFailure(JsonRpcCode.serverError, "the tool call was cancelled by the client");
    }
    if (error instanceof WireError) return notRun(exposedName, error, logger, span);
    throw error;
  } finally {
    clearTimeout(slow);
    if (!cleanupLater) cleanup();
  }
}

/**
 * A resource tool: the dispatcher runs it (arguments, events, truncation as the reference's);
 * no server is called, so there is nothing to relay and no approval to put to the client.
 */
async function callResourceTool(
  name: ResourceToolName,
  args: Record<string, unknown> | undefined,
  client: ClientChannel,
  deps: ToolCallDeps,
): Promise<McpCallResult> {
  const request: ToolCallRequest = {
    callId: deps.ports.newCallId(),
    threadId: client.threadId,
    tool: name,
    arguments: args === undefined ? "" : JSON.stringify(args),
    ...requesterOf(client),
  };
  const facts = { callId: request.callId, tool: name };
  const principal = { principal: request.requestedBy };
  return withCallSpan({ api: "mcp", parent: client.traceContext, ...facts, ...principal }, async (span) => {
    try {
      return mcpCallResult(await Promise.race([deps.ports.dispatch.call(request), abortion(client.signal)]));
    } catch (error) {
      if (client.signal.aborted) {
        throw new RequestFailure(JsonRpcCode.serverError, "the tool call was cancelled by the client");
      }
      if (error instanceof WireError) return notRun(name, error, deps.logger.child(facts), span);
      throw error;
    }
  });
}

/**
 * The dispatcher could not be asked, or did not answer: the model reads why, as a failed result
 * (answered, not thrown: the span says it failed all the same).
 */
function notRun(name: string, error: WireError, logger: Logger, span: Span): McpCallResult {
  logger.warn({ code: error.code }, `dispatch failed: ${error.message}`);
  markFailed(span, error);
  span.setAttribute("toolbus.error.code", error.code);
  return {
    content: [{ type: "text", text: `toolbus could not run ${name}: ${error.message}` }],
    isError: true,
  };
}

/**
 * How the call's server's elicitations reach the client, or none (a client that can answer no
 * elicitation: the connector's request finds no listener and the server gets its decline at
 * once). A client of a session is asked on its request's stream; a 2026-07-28 client gets the
 * question handed back (`handBack`), unless this request brings its answer already.
 */
function elicitationRelay(
  client: ClientChannel,
  elicit: (payload: Record<string, unknown>) => Promise<CallElicitationResult>,
  logger: Logger,
  handBack: (relayed: CallElicitationRequest & { relayId: string }) => Promise<CallElicitationResult>,
): ((relayed: CallElicitationRequest) => Promise<CallElicitationResult>) | undefined {
  if (!supportsElicitation(client.capabilities, "form") && !supportsElicitation(client.capabilities, "url")) {
    return undefined;
  }
  if (client.handBack === undefined) return (relayed) => relayElicitation(relayed, client, elicit, logger);
  return async (relayed) => {
    const mode = relayed.request.mode === "url" ? "url" : "form";
    // A connector names every question it holds; one it does not name cannot be resumed.
    if (!supportsElicitation(client.capabilities, mode) || relayed.relayId === undefined) {
      return { action: "decline" };
    }
    return handBack({ ...relayed, relayId: relayed.relayId });
  };
}

/**
 * A 2026-07-28 server's round, handed back to a 2026-07-28 client as it is (the server asks only
 * what the client declared: its capabilities go with the call).
 */
async function handRoundBack(
  relayed: CallInputRequest,
  askRound: (round: RelayedRound) => Promise<Record<string, unknown> | undefined>,
  answerTimeoutMs: number,
): Promise<CallInputResult> {
  // A connector names every round it holds; one it does not name cannot be resumed.
  if (relayed.relayId === undefined) {
    throw new WireError("bad_request", "a round of questions without a relayId cannot be handed back");
  }
  const responses = await askRound({ ...relayed, relayId: relayed.relayId });
  if (responses === undefined) {
    throw new WireError(
      "timeout",
      `the MCP client did not answer ${relayed.server}'s questions within ${answerTimeoutMs / 1000} s`,
      { retryable: false },
    );
  }
  return { responses: responses as CallInputResult["responses"] };
}

/**
 * A 2026-07-28 server's round put to a 2025 client question by question, as requests on the
 * call's stream (each as a 2025 server's would be); roots are answered empty (no one caller's
 * roots are the server's), and a question of another kind fails the round.
 */
async function answerQuestionByQuestion(
  relayed: CallInputRequest,
  client: ClientChannel,
  elicit: (payload: Record<string, unknown>) => Promise<CallElicitationResult>,
  answerTimeoutMs: number,
  logger: Logger,
): Promise<CallInputResult> {
  const responses: Record<string, unknown> = {};
  for (const [key, question] of Object.entries(relayed.requests)) {
    const params = question.params ?? {};
    const single = { callId: relayed.callId, server: relayed.server };
    switch (question.method) {
      case "elicitation/create": {
        const request = ElicitationParamsSchema.safeParse(params);
        responses[key] = request.success
          ? await relayElicitation({ ...single, request: request.data }, client, elicit, logger)
          : { action: "decline" };
        break;
      }
      case "sampling/createMessage": {
        const request = SamplingParamsSchema.safeParse(params);
        if (!request.success) {
          throw new WireError("bad_request", `${relayed.server}'s sampling/createMessage is malformed`);
        }
        responses[key] = await relaySampling(
          { ...single, request: request.data },
          client,
          answerTimeoutMs,
          logger,
        );
        break;
      }
      case "roots/list":
        responses[key] = { roots: [] };
        break;
      default:
        throw new WireError(
          "bad_request",
          `toolbus cannot put ${relayed.server}'s ${question.method} to an MCP client of the 2025 revisions`,
        );
    }
  }
  return { responses: responses as CallInputResult["responses"] };
}

/** A server's elicitation during the call, put to the client when it can answer that mode. */
async function relayElicitation(
  relayed: CallElicitationRequest,
  client: ClientChannel,
  elicit: (payload: Record<string, unknown>) => Promise<CallElicitationResult>,
  logger: Logger,
): Promise<CallElicitationResult> {
  const mode = relayed.request.mode === "url" ? "url" : "form";
  if (!supportsElicitation(client.capabilities, mode)) return { action: "decline" };
  try {
    return await elicit(relayed.request);
  } catch (error) {
    logger.info({ err: error }, "the client did not answer the server's elicitation; cancelling it");
    return { action: "cancel" };
  }
}

/**
 * A server's sampling request during the call, put to the client when it declared sampling.
 * Sampling has no decline: every way it fails is a `WireError` the server gets as its error.
 */
async function relaySampling(
  relayed: CallSamplingRequest,
  client: ClientChannel,
  answerTimeoutMs: number,
  logger: Logger,
  /** A 2026-07-28 client's way: the request handed back as `input_required`. */
  handBack?: (relayed: CallSamplingRequest & { relayId: string }) => Promise<CallSamplingResult>,
): Promise<CallSamplingResult> {
  if (!supportsSampling(client.capabilities)) {
    throw new WireError(
      "bad_request",
      `the MCP client that called this tool did not declare the sampling capability, so toolbus cannot ask it for ${relayed.server}'s sampling/createMessage; call the tool from a client that supports sampling`,
    );
  }
  // toolbus offers every server sampling with tools; a caller that cannot is told why here.
  const withTools = relayed.request.tools !== undefined || relayed.request.toolChoice !== undefined;
  if (withTools && !supportsSampling(client.capabilities, true)) {
    throw new WireError(
      "bad_request",
      `${relayed.server}'s sampling/createMessage offers the model tools, and the MCP client that called this tool did not declare sampling with tools (sampling.tools); call the tool from a client that supports it`,
    );
  }
  if (client.handBack !== undefined && handBack !== undefined) {
    // A connector names every question it holds; one it does not name cannot be resumed.
    if (relayed.relayId === undefined) {
      throw new WireError("bad_request", "a sampling request without a relayId cannot be handed back");
    }
    return handBack({ ...relayed, relayId: relayed.relayId });
  }
  try {
    return await client.createMessage(relayed.request, { timeoutMs: answerTimeoutMs, signal: client.signal });
  } catch (error) {
    logger.info({ err: error }, "the client did not answer the server's sampling request");
    if (client.signal.aborted) {
      throw new WireError(
        "transport_error",
        "the MCP client cancelled the call or went away before it answered",
      );
    }
    if ((error as { code?: unknown }).code === JsonRpcCode.requestTimeout) {
      throw new WireError("timeout", `the MCP client did not answer within ${answerTimeoutMs / 1000} s`);
    }
    // The SDK puts `MCP error <code>: ` in front of a JSON-RPC error's message, once per hop.
    const { code, message } = error as { code?: unknown; message?: unknown };
    const reason = String(message ?? error).replace(/^(MCP error -?\d+: )+/, "");
    throw new WireError(
      "bad_request",
      `the MCP client refused${typeof code === "number" ? ` (error ${code})` : ""}: ${reason}`,
    );
  }
}

async function askApproval(
  approval: ApprovalRequest,
  ask: () => Promise<CallElicitationResult>,
  by: string,
  deps: ToolCallDeps,
  logger: Logger,
): Promise<void> {
  let choice: ReturnType<typeof approvalChoice>;
  try {
    choice = approvalChoice(await ask(), approval);
  } catch (error) {
    // Answered elsewhere, or the client went away: the approval waits for the inbox or its timeout.
    logger.debug(
      { err: error, requestId: approval.requestId },
      "approval elicitation ended without an answer",
    );
    return;
  }
  try {
    await deps.ports.approvals.resolve(approval.requestId, choice, by);
    logger.info({ requestId: approval.requestId, choice }, "approval answered by the MCP client");
  } catch (error) {
    logger.info(
      { err: error, requestId: approval.requestId },
      "the approvals service did not take the client's answer",
    );
  }
}

function abortion(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
