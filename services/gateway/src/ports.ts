/**
 * What the handlers need from the rest of toolbus (the bus adapters) and from the MCP client
 * they serve (the session adapter). Handlers see only these interfaces.
 */
import type { Context } from "@opentelemetry/api";
import type {
  ApprovalChoice,
  ApprovalRequest,
  CallElicitationRequest,
  CallElicitationResult,
  CallInputRequest,
  CallInputResult,
  CallLogging,
  CallProgress,
  CallSamplingRequest,
  CallSamplingResult,
  CompleteResult,
  CompletionCompleteRequest,
  ExposedNameTable,
  LoggingLevel,
  Principal,
  PromptsGetResult,
  ResourcesReadResult,
  ResourceToolName,
  SamplingParams,
  ServerPrompt,
  ServerResource,
  ServerResourceTemplate,
  ToolCallReply,
  ToolCallRequest,
} from "@toolbus/protocol";
import type { ElicitAnswer } from "./core/approval-elicitation.js";
import type { ClientQuestion } from "./core/held-calls.js";
import type { LogLevelChoice } from "./core/log-level.js";
import type { ListedTool } from "./core/tool-listing.js";

/** One catalog revision as MCP clients see it. */
export interface CatalogState {
  readonly revision: number;
  readonly table: ExposedNameTable;
  readonly tools: readonly ListedTool[];
  /** The resource tools this gateway offers (none when `[gateway] resource_tools = false`). */
  readonly resourceTools: readonly ResourceToolName[];
  /** What a new session's `initialize` result tells the model (every server's instructions, bounded). */
  readonly instructions: string;
}

export interface CatalogPort {
  /** The current state; waits a little for the first one, then throws an Error saying what is wrong. */
  current(): Promise<CatalogState>;
}

export interface DispatchPort {
  /**
   * Throws `WireError` when the dispatcher could not be asked or did not answer. `signal`: stop
   * waiting (the call goes on in the dispatcher; the same request sent again joins it).
   */
  call(request: ToolCallRequest, options?: { signal?: AbortSignal }): Promise<ToolCallReply>;
  /**
   * The call's reply if it has one now, else undefined (it still runs, or waits for a human):
   * the request sent once more, which the dispatchers join to the call with its id, from their
   * ledger when the call ended. Throws `WireError` when the dispatcher could not be asked.
   */
  poll(request: ToolCallRequest): Promise<ToolCallReply | undefined>;
}

export interface CallRelaySinks {
  progress(event: CallProgress): void;
  logging(event: CallLogging): void;
  /**
   * None for a client that can answer no elicitation: nobody listens for the call's, and the
   * connector's request finding no responder gives the server its decline at once.
   */
  elicitation?(request: CallElicitationRequest): Promise<CallElicitationResult>;
  /** Resolves with the client's answer, or throws a `WireError` the server gets as its error. */
  sampling(request: CallSamplingRequest): Promise<CallSamplingResult>;
  /**
   * A 2026-07-28 server's round of questions: resolves with the client's answers by the server's
   * keys, or throws a `WireError` (the connector then answers what it can itself: declines,
   * empty roots; a sampling request fails the call). None for a client that can answer nothing:
   * the connector, finding no listener, does so at once.
   */
  input?(request: CallInputRequest): Promise<CallInputResult>;
}

export interface CallRelayPort {
  /** Listens to what the call's server sends while it runs; returns the function that stops listening. */
  open(callId: string, server: string, sinks: CallRelaySinks): () => void;
}

export interface ApprovalListener {
  pending(request: ApprovalRequest): void;
  /** Someone (this client, the inbox, a timeout) answered the request. */
  resolved(requestId: string): void;
}

export interface ApprovalsPort {
  /** Listens to the approval requests of one call; returns the function that stops listening. */
  watch(callId: string, listener: ApprovalListener): () => void;
  /** The call's requests waiting for a human now (a task's caller is asked them on any replica). */
  pendingFor(callId: string): Promise<ApprovalRequest[]>;
  /**
   * Answers as `by` (a principal name). Throws `WireError` when the approvals service refuses
   * (already resolved, expired) or is gone.
   */
  resolve(requestId: string, choice: ApprovalChoice, by: string): Promise<void>;
  /** Withdraws the call's pending approval, if any; never throws. */
  cancel(callId: string, reason: string): Promise<void>;
  /**
   * Ends the session grants of these threads (their MCP session ended, or a thread is bound to a
   * new principal); never throws: false when the approvals service did not confirm it.
   */
  forgetThreads(threadIds: readonly string[]): Promise<boolean>;
}

/** A caller's answers to a prompt's server's questions, and that server's own `requestState`. */
export interface PromptAnswers {
  inputResponses: Record<string, unknown>;
  requestState?: string;
}

/** The calls this replica runs for its clients, and their cancellation. */
export interface CallsPort {
  /** The call runs for `principal` until the returned function is called. */
  started(callId: string, principal: string): () => void;
  /** Who the call runs for, while it runs on this replica (empty: not here). */
  principalsOf(callId: string): readonly string[];
  /**
   * Tells the dispatcher running the call that its caller cancelled it: a pending approval is
   * withdrawn, a running tool is stopped (its server gets notifications/cancelled with `reason`).
   */
  cancel(callId: string, reason: string): void;
}

export interface ResourcesPort {
  list(): Promise<ServerResource[]>;
  templates(): Promise<ServerResourceTemplate[]>;
  /** Throws `WireError` when the server cannot read it (or has no such resource). */
  read(server: string, uri: string): Promise<ResourcesReadResult>;
}

export interface PromptsPort {
  /** Every ready server's prompts, by server. */
  list(): Promise<ServerPrompt[]>;
  /**
   * Throws `WireError` (`bad_request` when the server refused: unknown prompt, missing argument).
   * A 2026-07-28 server may ask first (`input_required`); `answers` are the caller's, sent again
   * with the server's `requestState`.
   */
  get(
    server: string,
    name: string,
    args: Record<string, string> | undefined,
    answers?: PromptAnswers,
  ): Promise<PromptsGetResult>;
  /** Throws `WireError`; a server without completions answers no values. */
  complete(request: CompletionCompleteRequest): Promise<CompleteResult>;
}

export interface GatewayPorts {
  catalog: CatalogPort;
  dispatch: DispatchPort;
  relay: CallRelayPort;
  approvals: ApprovalsPort;
  calls: CallsPort;
  resources: ResourcesPort;
  prompts: PromptsPort;
  newCallId(): string;
}

/**
 * A call whose approval was handed back to its client (2026-07-28, MRTR): what resuming it
 * needs, kept by the gateway until the client answers.
 */
export interface HeldCall {
  /** Sent again as it was: the dispatcher joins the call with this id. */
  request: ToolCallRequest;
  server: string;
  /** The raw tool name, for the span. */
  tool: string;
  /** The name the client called. */
  exposedName: string;
  /** The call span's W3C trace context, which the resumed request continues. */
  traceContext: Record<string, string>;
}

/**
 * What a 2026-07-28 client gets instead of a question in the middle of its request, or of a
 * long wait: `input_required` (the question, and the `requestState` that resumes the call), or
 * a task's handle (a client that takes tasks; core/tasks.ts).
 */
export interface HandedBack {
  [key: string]: unknown;
  resultType: "input_required" | "task";
}

/** The MCP client a request came from, as a handler may use it while it runs. */
export interface ClientChannel {
  readonly capabilities: Readonly<Record<string, unknown>>;
  /** Which of its servers' log messages the client gets (core/log-level.ts). */
  readonly logLevel: LogLevelChoice;
  /** The catalog revision of this session's last `tools/list`, if it listed. */
  readonly listedRevision: number | undefined;
  /** Aborted when the client cancels the request or goes away; its reason (a string) says which. */
  readonly signal: AbortSignal;
  /** The thread the call belongs to: the client's `_meta.threadId`, else the MCP session's id. */
  readonly threadId: string;
  /** Who the client is (its token's principal): recorded as who answered the call's approval. */
  readonly principal: string;
  /**
   * The principal the edge authenticated for this very request (its role, its source); absent
   * for a request another replica forwarded.
   */
  readonly caller?: Principal;
  readonly progressToken: string | number | undefined;
  /**
   * The W3C trace context the client sent with the request (`_meta` or HTTP headers), which
   * the call's span continues; `ROOT_CONTEXT` when it sent none.
   */
  readonly traceContext: Context;
  /** Sends a notification on the request's stream; resolves even if the client is gone. */
  notify(notification: { method: string; params: Record<string, unknown> }): Promise<void>;
  /** Sends `elicitation/create` on the request's stream and waits for the answer. */
  elicit(
    params: Record<string, unknown>,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<ElicitAnswer>;
  /**
   * 2026-07-28 (no requests to the client mid-request): a question for this client (the call's
   * approval, a server's elicitation) ends the request instead; this keeps the call (`HeldCall`)
   * and the question, and returns the `input_required` the client answers by sending the call
   * again (adapters/mcp/modern-edge.ts). Absent: questions are put to the client with `elicit`.
   */
  handBack?(call: HeldCall, question: ClientQuestion): Promise<HandedBack>;
  /**
   * With `handBack`: the answers to a server's round of questions handed back (by its keys),
   * which the client gives when it resumes the call, on whichever replica; undefined when it
   * does not in time.
   */
  awaitAnswer?(callId: string, relayId: string): Promise<Record<string, unknown> | undefined>;
  /**
   * A client that takes tasks: once the call has run this long without an answer, it is handed
   * back (`handBack` with `running`) and becomes a task.
   */
  readonly taskAfterMs?: number;
  /** A server's question after the call became a task: kept on the task for its client. */
  laterQuestion?(question: ClientQuestion): Promise<void>;
  /** The answers this very request brings, resuming its call (the round's relay id, the answers by key). */
  readonly answered?: { relayId: string; responses: Record<string, unknown> };
  /** Sends `sampling/createMessage` on the request's stream and waits for the client's model. */
  createMessage(
    params: SamplingParams,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<CallSamplingResult>;
}

/** The per-session state a request may change (kept in the session record, so replicas share it). */
export interface SessionStatePort {
  noteListed(revision: number): void;
  setLogLevel(level: LoggingLevel): void;
  subscribe(uri: string): void;
  unsubscribe(uri: string): void;
}

/** An MCP request that cannot be answered, as a JSON-RPC error (code from `JsonRpcCode`). */
export class RequestFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
    /** The JSON-RPC error's `data`, when it has some. */
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "RequestFailure";
  }
}
