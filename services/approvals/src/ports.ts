/**
 * The ports the handlers work through: one interface per outside thing (hook processes, the two
 * grant stores, the table of requests put to humans, the wake-up signal, the event publisher),
 * gathered with the service's policy into the one `ApprovalPorts` object every handler takes.
 */

import type {
  ApprovalChoice,
  ApprovalMode,
  ApprovalPolicy,
  ApprovalRequest,
  DecideResult,
  Grant,
  GrantKeys,
  HookHandler,
  HookPayload,
  HooksConfig,
  JsonValue,
  PermissionProfile,
} from "@toolbus/policy";
import type { ApprovalResolvedEvent } from "@toolbus/protocol";
import type { HookRun, ListPosition } from "./core/index.js";

export interface HookRunner {
  /** Runs every handler (at once) and answers their runs in the handlers' order; never rejects. */
  run(handlers: readonly HookHandler[], payload: HookPayload, signal?: AbortSignal): Promise<HookRun[]>;
}

/** What a grant store keeps beyond what the core compares. */
export interface GrantRecord extends Grant {
  grantedAt: string;
  requestId: string;
}

export interface GrantStore {
  get(key: string): Promise<Grant | undefined>;
  put(key: string, grant: GrantRecord): Promise<void>;
}

/** The session grants: a grant store whose keys start with their thread (`sessionKeyPrefix`). */
export interface SessionGrantStore extends GrantStore {
  /** Deletes every grant whose key starts with `prefix`; answers how many there were. */
  forgetPrefix(prefix: string): Promise<number>;
}

/** A request put to a human, as stored: what was asked, and what resolving it needs. */
export interface PendingRecord {
  request: ApprovalRequest;
  mode: ApprovalMode;
  keys: GrantKeys;
  fingerprint: string;
  /**
   * `callDigestOf` the call the request was put for: a decide for its callId re-attaches only
   * when its call digests the same. Absent on requests stored before requests were bound.
   */
  callDigest?: string;
  /** A PreToolUse hook's rewrite of the input, carried onto an approval. */
  updatedArguments?: JsonValue;
  state: "pending" | "resolved";
  /** Set once resolved. */
  result?: DecideResult;
  resolvedBy?: string;
}

/** A page of `listPending`. */
export interface ListPage {
  limit: number;
  /** Where the previous page ended. */
  after?: ListPosition;
  /** Only this call's requests. */
  callId?: string;
}

export type NewPendingRecord = Omit<PendingRecord, "state" | "result" | "resolvedBy" | "callDigest"> & {
  callDigest: string;
};

export interface PendingStore {
  find(requestId: string): Promise<PendingRecord | undefined>;
  /** Stores the request unless one with its id exists; either way answers the stored record. */
  create(record: NewPendingRecord): Promise<{ created: boolean; record: PendingRecord }>;
  /**
   * Requests still waiting at `now` (epoch ms), oldest first (by `createdAt`, then id): all of
   * them, or `page.limit` of them after `page.after`.
   */
  listPending(now: number, page?: ListPage): Promise<ApprovalRequest[]>;
  /**
   * Resolves a request that is still pending and wakes everyone waiting on it, on any replica.
   * Undefined when it was no longer pending (someone else resolved it first).
   */
  settle(requestId: string, result: DecideResult, by: string): Promise<PendingRecord | undefined>;
  /**
   * A human's answer in one write: resolves the request, as `settle` does, with what `choice`
   * decides for it (`choiceToDecision` of its mode and rewrite) — only if it is still pending at
   * `now` (epoch ms) and accepts `choice`. Undefined otherwise (unknown, answered, expired, not
   * offered, or stored before choices were recorded with it): read it to say why.
   */
  answer(
    requestId: string,
    choice: ApprovalChoice,
    by: string,
    now: number,
  ): Promise<PendingRecord | undefined>;
  /** Ids of requests still pending whose time ran out at `now`. */
  overdue(now: number, limit: number): Promise<string[]>;
}

/** One wait for a wake-up; `cancel` when no longer waiting. */
export interface DecisionWake {
  /**
   * Resolves when the request may have changed: with its decision when the wake-up carried it,
   * undefined when it did not (read the request again).
   */
  promise: Promise<DecideResult | undefined>;
  cancel(): void;
}

/** Wake-ups for waiters, from wherever the request is resolved. */
export interface DecisionSignals {
  next(requestId: string): DecisionWake;
}

export interface ApprovalEventSink {
  pending(request: ApprovalRequest): void;
  resolved(event: ApprovalResolvedEvent): void;
}

export interface ApprovalPorts {
  policy: ApprovalPolicy;
  permissionProfile: PermissionProfile;
  hooks: HooksConfig;
  /** How long a human has to answer. */
  timeoutMs: number;
  /** How often a waiting decide re-reads its request even without a wake-up. */
  pollIntervalMs: number;
  modeOf(server: string, tool: string): ApprovalMode;
  hookRunner: HookRunner;
  sessionGrants: SessionGrantStore;
  persistentGrants: GrantStore;
  pending: PendingStore;
  signals: DecisionSignals;
  events: ApprovalEventSink;
  /** Epoch milliseconds. */
  now(): number;
  /** Aborted when this replica stops: waiting decides give up so the caller retries elsewhere. */
  closing: AbortSignal;
}
