/**
 * The requests `approvals --watch` still has to show: each once (the list and the pending
 * event may both carry it), oldest first, gone as soon as anyone answers it.
 */
import type { ApprovalRequest } from "@toolbus/protocol";

export class ApprovalQueue {
  readonly #pending = new Map<string, ApprovalRequest>();
  /** Answered or expired requests: a late pending event must not bring them back. */
  readonly #done = new Set<string>();

  /** True when the request is new. */
  add(request: ApprovalRequest): boolean {
    if (this.#pending.has(request.requestId) || this.#done.has(request.requestId)) return false;
    this.#pending.set(request.requestId, request);
    return true;
  }

  /** Marks the request answered; true when it was waiting. */
  remove(requestId: string): boolean {
    this.#done.add(requestId);
    return this.#pending.delete(requestId);
  }

  /** The oldest waiting request (by `createdAt`, then arrival). */
  next(): ApprovalRequest | undefined {
    let oldest: ApprovalRequest | undefined;
    for (const request of this.#pending.values()) {
      if (!oldest || Date.parse(request.createdAt) < Date.parse(oldest.createdAt)) oldest = request;
    }
    return oldest;
  }

  get size(): number {
    return this.#pending.size;
  }
}
