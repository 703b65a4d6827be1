/**
 * What the handlers need from outside, as interfaces the adapters and connectors implement: the
 * catalog bucket (adapters/nats/catalog-store.ts), the resource origins
 * (adapters/nats/resource-origins.ts), and each owned server (connectors/server-connector.ts) with
 * its MCP session (adapters/mcp/mcp-connection.ts). Handlers see only these.
 */
import type { McpResourceOrigin } from "@toolbus/protocol";
import type { ServerEntry } from "./core/catalog-entry.js";

/** The catalog bucket, read. */
export interface CatalogEntries {
  /** The catalog revision: the sequence of the bucket's last change. */
  revision(): Promise<number>;
  read(server: string): Promise<ServerEntry | undefined>;
  /** Every server's entry, by name. */
  readAll(): Promise<ServerEntry[]>;
}

/** Where resource URIs came from, per tool call (checked when a read names `originCallId`). */
export interface ResourceOriginStore {
  record(origins: McpResourceOrigin[]): Promise<void>;
  forCall(server: string, callId: string): Promise<McpResourceOrigin[]>;
}

export type PagedMethod = "resources/list" | "resources/templates/list" | "prompts/list";

/** A ready server's MCP session, as the owner's handlers ask it; results come back as the server sent them. */
export interface McpSession {
  readonly capabilities: Record<string, unknown>;
  listResources(timeoutMs: number): Promise<unknown[]>;
  listResourceTemplates(timeoutMs: number): Promise<unknown[]>;
  listPrompts(timeoutMs: number): Promise<unknown[]>;
  /** One page, for callers that page through a single server themselves. */
  listPage(
    method: PagedMethod,
    cursor: string | undefined,
    timeoutMs: number,
  ): Promise<{ items: unknown[]; nextCursor?: string }>;
  readResource(uri: string, timeoutMs: number): Promise<Record<string, unknown>>;
  getPrompt(
    params: { name: string; arguments?: Record<string, string> },
    timeoutMs: number,
  ): Promise<Record<string, unknown>>;
  complete(
    params: {
      ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };
      argument: { name: string; value: string };
      context?: { arguments?: Record<string, string> };
    },
    timeoutMs: number,
  ): Promise<Record<string, unknown>>;
}

export type CallOutcome =
  | { kind: "ok"; result: Record<string, unknown> }
  | { kind: "stale"; message: string }
  | { kind: "not_ready"; message: string }
  | { kind: "bad_arguments"; message: string }
  | { kind: "disabled"; message: string }
  | { kind: "timeout"; message: string }
  | { kind: "too_large"; message: string }
  /** The caller cancelled the call (or the service is stopping): the server was sent notifications/cancelled. */
  | { kind: "cancelled"; message: string }
  | { kind: "failed"; message: string };

/** One `tools/call` for an owned server, as a handler asks for it. */
export interface ServerCallRequest {
  callId: string;
  threadId?: string;
  tool: string;
  arguments?: unknown;
  preparedRevision?: number;
  timeoutMs?: number;
  meta?: Record<string, unknown>;
  /** Who asked: a server isolated per principal runs the call in that principal's instance. */
  requestedBy?: string;
  /** What the caller's MCP client can answer; a 2026-07-28 server is told (core/caller-capabilities.ts). */
  clientCapabilities?: Record<string, unknown>;
  /** Aborted when the caller cancels the call: the server is sent notifications/cancelled with its reason. */
  signal?: AbortSignal;
  onProgress?: (progress: Record<string, unknown>) => void;
}

/** A server this replica owns: its settings, its session while ready, its calls. */
export interface OwnedServer {
  readonly settings: { readonly server: string; readonly toolTimeoutMs: number };
  /** Undefined while the server is not connected. */
  readonly mcp: McpSession | undefined;
  /** The raw `tools/call`, behind the revision barrier: one prepared against another revision is refused. */
  call(request: ServerCallRequest): Promise<CallOutcome>;
  /** Re-lists the tools; concurrent triggers coalesce into one more listing. */
  relist(reason: string): Promise<void>;
}
