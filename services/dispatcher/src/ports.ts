/**
 * What the call path needs from outside, as interfaces the adapters implement (adapters/nats/):
 * the local catalog copy, the approvals service, the connector, the resource subjects, the
 * call events and ledger, and the calls' cancellations. Handlers see only these.
 */
import type { CallLedgerPort as BusCallLedgerPort, TrackedCall } from "@toolbus/bus";
import type {
  ApprovalDecideRequest,
  ApprovalDecideResult,
  CallBeginEvent,
  CallEndEvent,
  CallToolResult,
  CatalogIndex,
  CatalogServerEntry,
  JsonObject,
  JsonValue,
  PostToolUseResult,
  ResourcesListResult,
  ResourcesReadResult,
  ResourceTemplatesListResult,
  Tool,
  ToolCallReply,
} from "@toolbus/protocol";

/**
 * The dispatcher's local copy of the catalog (adapters/nats/catalog-replica.ts): names resolve
 * and revisions are checked without a round trip; a call waits here for its server to be ready.
 */
export interface CatalogPort {
  /** The catalog revision this copy reflects. */
  readonly revision: number;
  readonly catalog: CatalogIndex;
  server(name: string): CatalogServerEntry | undefined;
  /** The raw tool as its server listed it (with `_meta`, which normalized entries leave out). */
  rawTool(server: string, name: string): Tool | undefined;
  /** Resolves true once this copy reflects `revision`, false after `timeoutMs` without it. */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean>;
  /** Resolves with the entry once the server is ready, or undefined after `timeoutMs`. */
  waitReady(server: string, timeoutMs: number): Promise<CatalogServerEntry | undefined>;
}

export interface ApprovalsPort {
  /**
   * Synchronous when the policy alone settles the call, so nothing waits on an idle tick. Rejects
   * with `bad_request` when the service refuses the call itself: its callId was already put to a
   * human for another call (the approval is bound to the call it approves).
   */
  decide(
    request: ApprovalDecideRequest,
    /** The call's cancellation: a decide waiting for a human stops asking again once it aborts. */
    cancelled?: AbortSignal,
  ): ApprovalDecideResult | Promise<ApprovalDecideResult>;
  /**
   * Withdraws the call's request put to a human (resolved as `abort`); false when none was
   * pending (not yet asked, or already answered) or the service did not answer. Never throws.
   */
  withdraw(callId: string, reason: string): Promise<boolean>;
  /** Whether a PostToolUse hook matches, so the round trip is paid only when it can matter. */
  hasPostToolUse(hookName: string): boolean;
  postToolUse(request: {
    callId: string;
    hookName: string;
    toolInput: JsonValue;
    toolResponse: CallToolResult;
    threadId?: string;
  }): Promise<PostToolUseResult>;
}

export interface ConnectorPort {
  /**
   * The raw call; throws `WireError` (`stale_revision`, `timeout`, …) when it did not run or failed.
   * Once `cancelled` aborts, a call the connector did not take yet is not offered again.
   */
  call(
    server: string,
    request: {
      callId: string;
      threadId?: string;
      tool: string;
      arguments?: JsonObject;
      preparedRevision: number;
      /** What the caller's MCP client can answer, passed to the server with the call. */
      clientCapabilities?: JsonObject;
    },
    cancelled?: AbortSignal,
  ): Promise<CallToolResult>;
  /** Tells the connector running the call to stop it (it sends the server notifications/cancelled). */
  cancel(server: string, callId: string, reason: string): void;
}

/** The calls their caller may cancel, as the call path tracks them. */
export interface CancellationsPort {
  /** The call's cancellation signal until `release` (already aborted when it was cancelled first). */
  track(callId: string): TrackedCall;
}

export interface EventsPort {
  /** The largest serialized event the bus carries (its max_payload less room for headers). */
  readonly maxEventBytes: number;
  begin(event: CallBeginEvent): void;
  end(event: CallEndEvent): void;
}

/** The catalog's resource subjects; each throws `WireError` when the catalog refused or did not answer. */
export interface ResourcesPort {
  list(request: { server?: string; cursor?: string }): Promise<ResourcesListResult>;
  templates(request: { server?: string; cursor?: string }): Promise<ResourceTemplatesListResult>;
  read(request: { server: string; uri: string }): Promise<ResourcesReadResult>;
}

/** The dispatch calls' ledger, as the call path needs it. */
export type CallLedgerPort = BusCallLedgerPort<ToolCallReply>;
