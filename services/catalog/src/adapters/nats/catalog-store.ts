/**
 * The catalog bucket (JetStream KV): one key per server, `server.<name>`. A write is
 * published with the stream's expected last sequence, so the entry can carry the very
 * revision (stream sequence) it is stored at, and concurrent replicas never both write
 * the same change: the loser re-reads, finds the change already there, and writes nothing.
 */
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { isOverMaxPayload, kvWriteSubject } from "@toolbus/bus";
import { CATALOG_NAMING_KEY, catalogEntryTooLarge, catalogKey } from "@toolbus/protocol";
import { nextServerEntry, type ServerEntry } from "../../core/catalog-entry.js";
import type { CatalogEntries } from "../../ports.js";

const MAX_WRITE_ATTEMPTS = 50;

export interface CatalogStoreDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: KV;
  bucket: string;
  /** The most one NATS message holds (the server's max_payload): an entry must fit it. */
  maxPayload: () => number;
}

export class CatalogStore implements CatalogEntries {
  constructor(private readonly deps: CatalogStoreDeps) {}

  get streamName(): string {
    return `KV_${this.deps.bucket}`;
  }

  /** The catalog revision: the sequence of the bucket's last change. */
  async revision(): Promise<number> {
    const info = await this.deps.jsm.streams.info(this.streamName);
    return info.state.last_seq;
  }

  async read(server: string): Promise<ServerEntry | undefined> {
    const entry = await this.deps.kv.get(catalogKey(server));
    return entry && entry.operation === "PUT" ? entry.json<ServerEntry>() : undefined;
  }

  async readAll(): Promise<ServerEntry[]> {
    const keys = await this.deps.kv.keys("server.*");
    const entries: ServerEntry[] = [];
    for await (const key of keys) {
      const entry = await this.deps.kv.get(key);
      if (entry && entry.operation === "PUT") entries.push(entry.json<ServerEntry>());
    }
    return entries.sort((a, b) => (a.server < b.server ? -1 : a.server > b.server ? 1 : 0));
  }

  /**
   * Applies `compute` to the stored entry and writes the result at the next revision, unless
   * it returns undefined (nothing changed). Returns the entry as stored afterwards, and the
   * catalog revision of the write when there was one.
   */
  async update(
    server: string,
    compute: (current: ServerEntry | undefined, nextRevision: number) => ServerEntry | undefined,
  ): Promise<{ entry: ServerEntry; written: boolean; sequence?: number }> {
    const subject = kvWriteSubject(this.deps.js, this.deps.bucket, catalogKey(server));
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const lastSequence = await this.revision();
      const current = await this.read(server);
      const next = compute(current, lastSequence + 1);
      if (!next) {
        if (!current) throw new Error(`no catalog entry for server '${server}' and nothing to write`);
        return { entry: current, written: false };
      }
      const text = JSON.stringify(next);
      try {
        const ack = await this.deps.js.publish(subject, text, { expect: { lastSequence } });
        return { entry: next, written: true, sequence: ack.seq };
      } catch (error) {
        if (isOverMaxPayload(error)) {
          const facts = { server, tools: next.tools.length, bytes: Buffer.byteLength(text) };
          // The message says all the client's refusal did; as a cause it would repeat in the error chain.
          throw new Error(catalogEntryTooLarge({ ...facts, limit: this.deps.maxPayload() }));
        }
        if (!isWrongLastSequence(error)) throw error;
      }
    }
    throw new Error(`could not write the catalog entry of '${server}': the bucket kept changing under us`);
  }

  /** Convenience over `update` with the entry rule of core/catalog-entry. */
  async apply(
    base: Omit<ServerEntry, "revision" | "tools" | "status" | "listedAt">,
    change: Parameters<typeof nextServerEntry>[2],
    now: () => string,
  ): Promise<{ entry: ServerEntry; written: boolean; sequence?: number }> {
    return this.update(base.server, (current, nextRevision) =>
      nextServerEntry(current, base, change, nextRevision, now()),
    );
  }

  async putNaming(options: unknown): Promise<void> {
    const current = await this.deps.kv.get(CATALOG_NAMING_KEY);
    const text = JSON.stringify(options);
    if (current && current.operation === "PUT" && current.string() === text) return;
    await this.deps.kv.put(CATALOG_NAMING_KEY, text);
  }
}

function isWrongLastSequence(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return message.includes("wrong last sequence") || (error as { code?: unknown }).code === 10071;
}
