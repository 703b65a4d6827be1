/**
 * What the handlers need from the outside, as interfaces the adapters implement: the usage
 * store (Postgres) and the failure it reports, already sorted into transient and permanent.
 */
import type { RolloutUsage } from "@toolbus/protocol";
import type { CountableMessage } from "./core/batch-plan.js";
import type { DbFailureKind } from "./core/db-failure.js";
import type { UsageQuery } from "./core/usage-query.js";

/** A message to park, as it came off the stream. */
export interface ParkInput {
  streamSequence: number;
  subject: string;
  messageId: string | null;
  error: string;
  deliveries: number;
  payload: Uint8Array;
}

export interface BatchWrite {
  /** Counted unless their messageId was counted before. */
  count: readonly CountableMessage[];
  park: readonly ParkInput[];
  /** Unix seconds, written to `last_usage`. */
  now: number;
}

export interface BatchWriteResult {
  /** Messages counted now. */
  counted: number;
  /** Messages skipped because their messageId was counted before. */
  duplicates: number;
  /** Citation mentions added to rollouts' usage counts (mentions of unknown rollouts add nothing). */
  citations: number;
}

export interface ParkedMessage {
  stream: string;
  streamSequence: number;
  subject: string;
  messageId: string | null;
  error: string;
  deliveries: number;
  /** Unix seconds. */
  parkedAt: number;
  payloadBytes: number;
  payloadPreview: string;
}

export interface UsageStore {
  /** One transaction: records the ids, counts the new messages' citations, parks the rest. */
  writeBatch(write: BatchWrite): Promise<BatchWriteResult>;
  usage(query: UsageQuery): Promise<RolloutUsage[]>;
  /** Most recently parked first. */
  parked(limit: number): Promise<ParkedMessage[]>;
}

/** A store operation failed; `kind` says whether the same work may succeed later. */
export class StoreError extends Error {
  readonly kind: DbFailureKind;

  constructor(kind: DbFailureKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StoreError";
    this.kind = kind;
  }
}
