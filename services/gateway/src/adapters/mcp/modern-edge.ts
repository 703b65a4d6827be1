/**
 * The 2026-07-28 era of an MCP endpoint (`/mcp`, or a view's), on the same URL as the 2025
 * sessions: the v2 SDK's per-request handler (`createMcpHandler`, strict: 2025 traffic never
 * reaches it) answers `server/discover`, checks the headers against the body (`-32020`) and the
 * per-request `_meta` envelope, and serves `subscriptions/listen`; each request gets a server
 * with the gateway's handlers, for the principal the edge authenticated.
 *
 * What differs from a session: there is none. The client's capabilities and log level come
 * with each request (a request that names no log level gets no log messages); a call's thread is the client's `_meta.threadId` (claimed as in a
 * session) or the call's own; the catalog revision a client listed is not known, so a call is
 * checked against the current catalog only. A question for the client during a call (its
 * approval, its server's questions: a 2026-07-28 server's under its own keys) is handed back as
 * `input_required` (core/held-calls.ts), and the client's answer resumes the call on any
 * replica; a client that takes tasks gets a task instead (modern-tasks.ts); a 2025 server's
 * elicitation or sampling request is handed back as a round of one. List results carry cache
 * hints: `private` behind auth.
 */
import { randomUUID } from "node:crypto";
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  type CacheScope,
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  isLegacyRequest,
  LOG_LEVEL_META_KEY,
  type McpHttpHandler,
  ProtocolError,
  Server,
  type ServerContext,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
} from "@modelcontextprotocol/server";
import type { Logger } from "@toolbus/bus";
import { ANONYMOUS, type Principal } from "@toolbus/http-guard";
import { asksFirst } from "@toolbus/protocol";
import { clientTraceContext } from "../../call-trace.js";
import { approvalChoice } from "../../core/approval-elicitation.js";
import {
  APPROVAL_KEY,
  elicitationAnswer,
  type HeldQuestion,
  inputRequired as heldInputRequired,
  roundAnswers,
  storedQuestion,
} from "../../core/held-calls.js";
import { JsonRpcCode } from "../../core/jsonrpc-errors.js";
import { requestLogLevel } from "../../core/log-level.js";
import { paramHeaderRefusal } from "../../core/mcp-param-headers.js";
import { callThread } from "../../core/session-threads.js";
import { declaresTasks, TASKS_EXTENSION } from "../../core/tasks.js";
import { callTool, resumeCall, type ToolCallDeps } from "../../handlers/tools-call.js";
import { type ClientChannel, RequestFailure } from "../../ports.js";
import type { SessionStore } from "../nats/session-store.js";
import { claimNamedThread, type McpSessionDeps } from "./mcp-session.js";
import {
  keepLaterQuestion,
  type MadeHere,
  makeTask,
  registerTaskHandlers,
  type TaskDeps,
} from "./modern-tasks.js";
import type { ViewSessionDeps } from "./session-registry.js";

export interface ModernEdgeDeps {
  /** The endpoint's catalog, resources and prompts (the default one's, or a view's). */
  endpoint: ViewSessionDeps;
  /** The view it serves; undefined: `/mcp`. */
  view: string | undefined;
  logger: Logger;
  serverInfo: { name: string; version: string };
  answerTimeoutMs: number;
  elicitApprovals: boolean;
  selfApprove: boolean;
  /** Keeps the calls handed back to their clients and the tasks, and passes answers to the replica that waits for them. */
  store: Pick<
    SessionStore,
    | "holdQuestion"
    | "takeQuestion"
    | "holdPrompt"
    | "takePrompt"
    | "forwardAnswer"
    | "createTask"
    | "readTask"
    | "updateTask"
  >;
  /**
   * Tasks, for clients that declare them: a call becomes one after `afterMs` without an answer
   * (or at its first question), and is kept `ttlMs`.
   */
  tasks: { afterMs: number; ttlMs: number; madeHere: MadeHere };
  /** The answers to handed-back elicitations this replica's relays wait for. */
  answers: AwaitedAnswers;
  threads: Pick<McpSessionDeps, "isSession" | "claimThread">;
  /**
   * `private` when a list depends on who asks (auth on: what a caller may see is theirs),
   * `public` when every caller gets the same answer.
   */
  cacheScope: CacheScope;
  bodyLimitBytes: number;
}

/** The client's answers to a round, by the server's keys; undefined: none came. */
type Answers = Record<string, unknown> | undefined;

/**
 * The answers this replica waits for, to rounds of questions it handed back (`callId`/`relayId`),
 * each for at most `timeoutMs` (then none, and the server gets its declines or an error), and at
 * most `max` at once (a round past it gets none at once).
 */
export class AwaitedAnswers {
  readonly #waiting = new Map<string, (answers: Answers) => void>();
  constructor(
    private readonly timeoutMs: number,
    private readonly max = 10_000,
  ) {}

  wait(callId: string, relayId: string): Promise<Answers> {
    const key = `${callId}\n${relayId}`;
    if (this.#waiting.size >= this.max) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(undefined), this.timeoutMs);
      const settle = (answers: Answers) => {
        clearTimeout(timer);
        if (this.#waiting.get(key) === settle) this.#waiting.delete(key);
        resolve(answers);
      };
      this.#waiting.get(key)?.(undefined);
      this.#waiting.set(key, settle);
    });
  }

  /** The client's answers, from whichever replica they reached. */
  answer(callId: string, relayId: string, answers: Record<string, unknown>): void {
    this.#waiting.get(`${callId}\n${relayId}`)?.(answers);
  }

  /** Every wait ends (no answers): the gateway stops. */
  clear(): void {
    for (const settle of [...this.#waiting.values()]) settle(undefined);
  }
}

export interface ModernEdge {
  /** Answers the request on `raw`. `body`: the parsed JSON body. */
  serve(
    request: { url: string; headers: IncomingHttpHeaders },
    body: unknown,
    principal: Principal,
    raw: ServerResponse,
  ): Promise<void>;
  /** Tells the open `subscriptions/listen` streams that the tool listing changed. */
  toolsChanged(): void;
  promptsChanged(): void;
  close(): Promise<void>;
}

/**
 * How long a client may keep a list: the catalog's revisions are announced on
 * `subscriptions/listen`, so a listening client re-lists at once; one that does not is stale
 * for at most this.
 */
export const LIST_TTL_MS = 60_000;

/** Whether a POST belongs to the 2026-07-28 era (the SDK's own classification, from headers and body). */
export async function isModernRequest(
  request: { url: string; headers: IncomingHttpHeaders },
  body: unknown,
): Promise<boolean> {
  const probe = new Request(new URL(request.url, "http://gateway"), {
    method: "POST",
    headers: webHeaders(request.headers),
  });
  return !(await isLegacyRequest(probe, body));
}

export function modernEdge(deps: ModernEdgeDeps): ModernEdge {
  const { logger } = deps;
  const list = { ttlMs: LIST_TTL_MS, cacheScope: deps.cacheScope };
  const handler: McpHttpHandler = createMcpHandler(
    async (context) => {
      const principal = principalOf(context.authInfo?.extra);
      const server = new Server(deps.serverInfo, {
        capabilities: {
          tools: { listChanged: true },
          resources: {},
          prompts: { listChanged: true },
          completions: {},
          logging: {},
          extensions: { [TASKS_EXTENSION]: {} },
        },
        instructions: await deps.endpoint.instructions(),
        cacheHints: {
          "tools/list": list,
          "prompts/list": list,
          "resources/list": list,
          "resources/templates/list": list,
          "server/discover": list,
        },
      });
      server.onerror = (error) => logger.debug({ err: error }, "MCP request error (2026-07-28)");
      registerHandlers(server, principal, deps);
      return server;
    },
    {
      legacy: "reject",
      maxRequestBodySize: deps.bodyLimitBytes,
      onerror: (error) => logger.debug({ err: error }, "refused an MCP request (2026-07-28)"),
    },
  );
  return {
    async serve(request, body, principal, raw) {
      // Mcp-Param-* headers against the listed tool's annotations (core/mcp-param-headers.ts).
      const listing = async () => (await deps.endpoint.ports.catalog.current()).tools;
      const refused = await paramHeaderRefusal(body, request.headers, listing);
      if (refused) {
        logger.debug({ error: refused.body.error }, "refused an MCP request (2026-07-28)");
        raw
          .writeHead(refused.status, { "content-type": "application/json" })
          .end(JSON.stringify(refused.body));
        return;
      }
      const left = new AbortController();
      raw.once("close", () => {
        if (!raw.writableFinished) left.abort(new Error("the MCP client closed the connection"));
      });
      const response = await handler.fetch(
        // The body is passed parsed (fastify read it, within the edge's limit), not again as bytes.
        new Request(new URL(request.url, "http://gateway"), {
          method: "POST",
          headers: webHeaders(request.headers),
          signal: left.signal,
        }),
        {
          parsedBody: body,
          authInfo: { token: "", clientId: principal.name, scopes: [], extra: { principal } },
        },
      );
      raw.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body === null) {
        raw.end();
        return;
      }
      await pipeline(Readable.fromWeb(response.body as import("node:stream/web").ReadableStream), raw).catch(
        (error: unknown) => logger.debug({ err: error }, "an MCP response stream ended early"),
      );
    },
    toolsChanged: () => handler.notify.toolsChanged(),
    promptsChanged: () => handler.notify.promptsChanged(),
    close: () => handler.close(),
  };
}

function registerHandlers(server: Server, principal: Principal, deps: ModernEdgeDeps): void {
  const { ports, resources, prompts } = deps.endpoint;
  const toolDeps: ToolCallDeps = {
    ports,
    logger: deps.logger,
    answerTimeoutMs: deps.answerTimeoutMs,
    elicitApprovals: deps.elicitApprovals,
    selfApprove: deps.selfApprove,
  };
  const run = <T>(work: () => Promise<T>): Promise<T> => failuresAsErrors(work, deps.logger);
  registerTaskHandlers(server, principal, capabilitiesOf, taskDeps(deps), run);
  server.setRequestHandler("tools/list", () =>
    run(async () => ({ tools: [...(await ports.catalog.current()).tools] }) as never),
  );
  server.setRequestHandler("tools/call", (request, ctx) =>
    run(async () => {
      const channel = await clientChannel(ctx, principal, deps);
      const state = ctx.mcpReq.requestState<string>();
      if (state === undefined) {
        return (await callTool(
          { name: request.params.name, arguments: request.params.arguments },
          channel,
          toolDeps,
        )) as never;
      }
      return (await answerHeldQuestion(
        state,
        ctx.mcpReq.inputResponses,
        channel,
        principal,
        deps,
        toolDeps,
      )) as never;
    }),
  );
  server.setRequestHandler("resources/list", () => run(async () => (await resources.list()) as never));
  server.setRequestHandler("resources/templates/list", () =>
    run(async () => (await resources.templates()) as never),
  );
  server.setRequestHandler("resources/read", (request) =>
    run(async () => (await resources.read(request.params.uri)) as never),
  );
  server.setRequestHandler("prompts/list", () => run(async () => (await prompts.list()) as never));
  server.setRequestHandler("prompts/get", (request, ctx) =>
    run(async () => (await getPrompt(request.params, ctx, principal, deps)) as never),
  );
  server.setRequestHandler("completion/complete", (request) =>
    run(
      async () =>
        (await prompts.complete({
          ref:
            request.params.ref.type === "ref/prompt"
              ? { type: "ref/prompt", name: request.params.ref.name }
              : { type: "ref/resource", uri: request.params.ref.uri },
          argument: request.params.argument,
          context: request.params.context,
        })) as never,
    ),
  );
}

/**
 * The client's answer to a question handed back to it: the question taken from the store (once,
 * only by the call's own principal at this endpoint, and only with answers that fit it), then
 * answered: an approval in that principal's name; a server's round passed to the replica that
 * holds its relay (and known to this request, so this replica answers it too). Then the call
 * resumes: its reply, or its next question.
 */
async function answerHeldQuestion(
  state: string,
  responses: Record<string, unknown> | undefined,
  channel: ClientChannel,
  principal: Principal,
  deps: ModernEdgeDeps,
  toolDeps: ToolCallDeps,
): Promise<unknown> {
  const fits = (question: HeldQuestion["question"]) =>
    question.kind === "input"
      ? roundAnswers(question.requests, responses)
      : elicitationAnswer(responses?.[APPROVAL_KEY]) !== undefined
        ? { ok: true as const }
        : {
            ok: false as const,
            message: `Invalid params: inputResponses.${APPROVAL_KEY} must answer the elicitation in inputRequests.${APPROVAL_KEY} ({"action":"accept"|"decline"|"cancel",…}); send it with the requestState it came with`,
          };
  const taken = await deps.store.takeQuestion(state, { principal: principal.name, view: deps.view }, (held) =>
    fits(held.question),
  );
  if (!taken.ok) throw new RequestFailure(JsonRpcCode.invalidParams, taken.message);
  const { question, call } = taken.question;
  if (question.kind === "input") {
    const answered = roundAnswers(question.requests, responses);
    if (!answered.ok) throw new RequestFailure(JsonRpcCode.invalidParams, answered.message);
    deps.store.forwardAnswer(call.request.callId, question.relayId, answered.responses);
    return resumeCall(
      call,
      { ...channel, answered: { relayId: question.relayId, responses: answered.responses } },
      toolDeps,
    );
  }
  const { approval } = question;
  const choice = approvalChoice(
    elicitationAnswer(responses?.[APPROVAL_KEY]) ?? { action: "cancel" },
    approval,
  );
  try {
    await toolDeps.ports.approvals.resolve(approval.requestId, choice, principal.name);
    deps.logger.info(
      { requestId: approval.requestId, choice },
      "approval answered by the MCP client (2026-07-28)",
    );
  } catch (error) {
    // Answered elsewhere meanwhile (the inbox, a timeout): the call's own outcome says how.
    deps.logger.info(
      { err: error, requestId: approval.requestId },
      "the approvals service did not take the client's answer",
    );
  }
  return resumeCall(call, channel, toolDeps);
}

/**
 * `prompts/get`: the prompt, or its 2026-07-28 server's questions, handed to the client under
 * the server's keys with a requestState of toolbus's (the server's own is kept with the prompt,
 * as a held call is). The answers, sent with that requestState, ask the server again, for the
 * same prompt with the same arguments, with its own requestState.
 */
async function getPrompt(
  params: { name: string; arguments?: Record<string, string> | undefined },
  ctx: ServerContext,
  principal: Principal,
  deps: ModernEdgeDeps,
): Promise<unknown> {
  const { prompts } = deps.endpoint;
  const asker = { principal: principal.name, view: deps.view };
  const state = ctx.mcpReq.requestState<string>();
  let asked: { name: string; arguments?: Record<string, string> | undefined };
  let result: Awaited<ReturnType<typeof prompts.ask>>;
  if (state === undefined) {
    asked = params;
    result = await prompts.ask(params.name, params.arguments);
  } else {
    const responses = ctx.mcpReq.inputResponses;
    const taken = await deps.store.takePrompt(state, asker, (held) => roundAnswers(held.requests, responses));
    if (!taken.ok) throw new RequestFailure(JsonRpcCode.invalidParams, taken.message);
    const answered = roundAnswers(taken.prompt.requests, responses);
    if (!answered.ok) throw new RequestFailure(JsonRpcCode.invalidParams, answered.message);
    asked = { name: taken.prompt.name, arguments: taken.prompt.arguments };
    result = await prompts.ask(asked.name, asked.arguments, {
      inputResponses: answered.responses,
      ...(taken.prompt.serverState !== undefined ? { requestState: taken.prompt.serverState } : {}),
    });
  }
  if (!asksFirst(result)) return result;
  const { inputRequests, requestState: serverState } = result;
  const key = await deps.store.holdPrompt({
    principal: principal.name,
    ...(deps.view === undefined ? {} : { view: deps.view }),
    name: asked.name,
    ...(asked.arguments !== undefined ? { arguments: asked.arguments } : {}),
    requests: inputRequests,
    ...(serverState !== undefined ? { serverState } : {}),
  });
  return { resultType: "input_required", inputRequests, requestState: key };
}

/** The request's client, as a tool call uses it: what it declared on this request, its thread. */
async function clientChannel(
  ctx: ServerContext,
  principal: Principal,
  deps: ModernEdgeDeps,
): Promise<ClientChannel> {
  const envelope = (ctx.mcpReq.envelope ?? {}) as Record<string, unknown>;
  const meta = ctx.mcpReq._meta as Record<string, unknown> | undefined;
  const thread = callThread(meta, `call-${randomUUID()}`);
  if (!thread.ok) throw new RequestFailure(JsonRpcCode.invalidParams, thread.message);
  if (thread.named) {
    await claimNamedThread(
      thread.threadId,
      principal.name,
      true,
      deps.threads,
      "for a thread of this call alone",
    );
  }
  const capabilities = capabilitiesOf(ctx);
  const tasks = declaresTasks(capabilities) ? taskDeps(deps) : undefined;
  const trace = Object.fromEntries(
    [
      ["traceparent", envelope[TRACEPARENT_META_KEY] ?? meta?.traceparent],
      ["tracestate", envelope[TRACESTATE_META_KEY] ?? meta?.tracestate],
    ].filter(([, value]) => typeof value === "string"),
  );
  const progressToken = meta?.progressToken;
  const notAsked = () =>
    Promise.reject(
      new Error(
        "a 2026-07-28 client is not sent requests in the middle of another; it answers input_required",
      ),
    );
  return {
    threadId: thread.threadId,
    capabilities,
    ...(tasks === undefined ? {} : { taskAfterMs: deps.tasks.afterMs }),
    logLevel: requestLogLevel(envelope[LOG_LEVEL_META_KEY]),
    listedRevision: undefined,
    signal: ctx.mcpReq.signal,
    principal: principal.name,
    caller: principal,
    progressToken:
      typeof progressToken === "string" || typeof progressToken === "number" ? progressToken : undefined,
    traceContext: clientTraceContext({ meta: trace, headers: headersOf(ctx.http?.req) }),
    notify: (notification) =>
      ctx.mcpReq.notify(notification).catch((error: unknown) => {
        deps.logger.debug({ err: error }, "could not relay a notification to the client");
      }),
    elicit: notAsked,
    createMessage: notAsked,
    handBack: async (call, question) => {
      if (tasks !== undefined) return makeTask(call, question, principal, tasks);
      // Only a client that takes tasks is handed back a call that merely runs long.
      if (question.kind === "running")
        throw new Error("a call was handed back for running long without tasks");
      const held = storedQuestion(question);
      const key = await deps.store.holdQuestion({
        principal: principal.name,
        ...(deps.view === undefined ? {} : { view: deps.view }),
        call,
        question: held,
      });
      return heldInputRequired(held, key);
    },
    awaitAnswer: (callId, relayId) => deps.answers.wait(callId, relayId),
    ...(tasks === undefined
      ? {}
      : {
          laterQuestion: (question) =>
            keepLaterQuestion(question.kind === "input" ? question.relayed.callId : "", question, tasks),
        }),
  };
}

/** What the request's client declared it can do (its envelope's capabilities). */
function capabilitiesOf(ctx: ServerContext): Record<string, unknown> {
  const declared = ((ctx.mcpReq.envelope ?? {}) as Record<string, unknown>)[CLIENT_CAPABILITIES_META_KEY];
  return isRecord(declared) ? declared : {};
}

function taskDeps(deps: ModernEdgeDeps): TaskDeps {
  return {
    store: deps.store,
    ports: deps.endpoint.ports,
    view: deps.view,
    ttlMs: deps.tasks.ttlMs,
    elicitApprovals: deps.elicitApprovals,
    selfApprove: deps.selfApprove,
    logger: deps.logger,
    madeHere: deps.tasks.madeHere,
  };
}

/** A `RequestFailure` (or a thrown `WireError`'s message) answered as the JSON-RPC error it names. */
async function failuresAsErrors<T>(work: () => Promise<T>, logger: Logger): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof RequestFailure) throw new ProtocolError(error.code, error.message, error.data);
    logger.error({ err: error }, "an MCP request failed (2026-07-28)");
    throw error;
  }
}

function principalOf(extra: Record<string, unknown> | undefined): Principal {
  const principal = extra?.principal;
  return typeof principal === "object" && principal !== null ? (principal as Principal) : ANONYMOUS;
}

function headersOf(request: Request | undefined): Record<string, string> | undefined {
  return request ? Object.fromEntries(request.headers) : undefined;
}

function webHeaders(headers: IncomingHttpHeaders): Headers {
  const web = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    web.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  return web;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
