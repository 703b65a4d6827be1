// A UsageStore that records writes and fails as a test scripts it: the Postgres seam, faked
// only where the real database cannot be made to fail on cue (the pg adapter's own tests use Postgres).
import type { RolloutUsage } from "@toolbus/protocol";
import type { BatchWrite, BatchWriteResult, ParkedMessage, UsageStore } from "../../src/ports.js";
import { StoreError } from "../../src/ports.js";

export type WriteScript = (write: BatchWrite) => StoreError | undefined;

export class ScriptedStore implements UsageStore {
  readonly writes: BatchWrite[] = [];
  readonly counted = new Set<string>();
  readonly #script: WriteScript;

  constructor(script: WriteScript = () => undefined) {
    this.#script = script;
  }

  async writeBatch(write: BatchWrite): Promise<BatchWriteResult> {
    const failure = this.#script(write);
    if (failure !== undefined) throw failure;
    this.writes.push(write);
    let counted = 0;
    let citations = 0;
    for (const message of write.count) {
      if (this.counted.has(message.messageId)) continue;
      this.counted.add(message.messageId);
      counted += 1;
      citations += message.threadIds.length;
    }
    return { counted, duplicates: write.count.length - counted, citations };
  }

  async usage(): Promise<RolloutUsage[]> {
    return [];
  }

  async parked(): Promise<ParkedMessage[]> {
    return [];
  }
}

export const transient = () => new StoreError("transient", "connect ECONNREFUSED 127.0.0.1:5432");
export const permanent = () =>
  new StoreError("permanent", 'invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021)');
