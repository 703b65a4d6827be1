/**
 * The dispatcher's local copy of the catalog, kept by watching the catalog bucket: calls
 * resolve names and check revisions without a catalog round trip. Also where a call waits
 * for its server to become ready.
 */
import type { JetStreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { followKv } from "@toolbus/bus";
import {
  buildCatalogSnapshot,
  CatalogIndex,
  type CatalogServerEntry,
  CatalogServerEntrySchema,
  type NamingOptions,
  serverFromCatalogKey,
  type Tool,
} from "@toolbus/protocol";
import type { CatalogPort } from "../../ports.js";

type Waiter = { resolve: (entry: CatalogServerEntry | undefined) => void; timer: NodeJS.Timeout };
type RevisionWaiter = { revision: number; resolve: (reached: boolean) => void; timer: NodeJS.Timeout };

export class CatalogReplica implements CatalogPort {
  private readonly entries = new Map<string, CatalogServerEntry>();
  private naming: NamingOptions = {};
  private revisionSeen = 0;
  private index: CatalogIndex | undefined;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly revisionWaiters = new Set<RevisionWaiter>();
  private stopWatch: (() => void) | undefined;

  private constructor(private readonly kv: KV) {}

  /** Reads the whole bucket, entry by entry, then follows every change after it. */
  static async open(deps: { kv: KV; jsm: JetStreamManager; bucket: string; onError(e: unknown): void }) {
    const replica = new CatalogReplica(deps.kv);
    let following = false;
    const { revision, stop } = await followKv({
      ...deps,
      apply: (change) => {
        replica.apply(change.key, change.operation, change.value);
        if (!following) return;
        replica.revisionSeen = Math.max(replica.revisionSeen, change.revision);
        replica.releaseRevisionWaiters();
      },
      ended: (error) => {
        if (error !== undefined) deps.onError(error);
      },
    });
    replica.revisionSeen = revision;
    following = true;
    replica.stopWatch = stop;
    return replica;
  }

  /** The catalog revision this copy reflects. */
  get revision(): number {
    return this.revisionSeen;
  }

  get catalog(): CatalogIndex {
    if (!this.index) {
      this.index = new CatalogIndex(
        buildCatalogSnapshot([...this.entries.values()], {
          naming: this.naming,
          revision: this.revisionSeen,
          exposure: "all",
        }),
      );
    }
    return this.index;
  }

  server(name: string): CatalogServerEntry | undefined {
    return this.entries.get(name);
  }

  /** The raw tool as its server listed it (with `_meta`, which normalized entries leave out). */
  rawTool(server: string, name: string): Tool | undefined {
    return this.entries.get(server)?.tools.find((tool) => tool.name === name);
  }

  /** Resolves true once this copy reflects `revision`, false after `timeoutMs` without it. */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.revisionSeen >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: RevisionWaiter = {
        revision,
        resolve,
        timer: setTimeout(() => {
          this.revisionWaiters.delete(waiter);
          resolve(this.revisionSeen >= revision);
        }, timeoutMs),
      };
      this.revisionWaiters.add(waiter);
    });
  }

  /** Resolves with the entry once the server is ready, or undefined after `timeoutMs`. */
  waitReady(server: string, timeoutMs: number): Promise<CatalogServerEntry | undefined> {
    const entry = this.entries.get(server);
    if (entry?.status === "ready") return Promise.resolve(entry);
    if (entry?.status === "disabled" || timeoutMs <= 0) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        timer: setTimeout(() => {
          this.waiters.get(server)?.delete(waiter);
          resolve(undefined);
        }, timeoutMs),
      };
      const set = this.waiters.get(server) ?? new Set();
      set.add(waiter);
      this.waiters.set(server, set);
    });
  }

  stop(): void {
    this.stopWatch?.();
    for (const set of this.waiters.values()) {
      for (const waiter of set) {
        clearTimeout(waiter.timer);
        waiter.resolve(undefined);
      }
    }
    this.waiters.clear();
    for (const waiter of this.revisionWaiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(false);
    }
    this.revisionWaiters.clear();
  }

  private releaseRevisionWaiters(): void {
    for (const waiter of this.revisionWaiters) {
      if (waiter.revision > this.revisionSeen) continue;
      clearTimeout(waiter.timer);
      this.revisionWaiters.delete(waiter);
      waiter.resolve(true);
    }
  }

  private apply(key: string, operation: string, text: string): void {
    if (key === "naming") {
      if (operation === "PUT") this.naming = (parseJson(text) ?? {}) as NamingOptions;
      this.index = undefined;
      return;
    }
    const server = serverFromCatalogKey(key);
    if (server === null) return;
    if (operation !== "PUT") {
      this.entries.delete(server);
      this.index = undefined;
      return;
    }
    const parsed = CatalogServerEntrySchema.safeParse(parseJson(text));
    if (!parsed.success) return;
    const previous = this.entries.get(server);
    this.entries.set(server, parsed.data);
    // Names only depend on the tool lists, so a status change keeps the built index.
    if (
      previous?.revision !== parsed.data.revision ||
      previous.status === "disabled" ||
      parsed.data.status === "disabled"
    ) {
      this.index = undefined;
    }
    if (parsed.data.status === "ready") this.releaseWaiters(server, parsed.data);
  }

  private releaseWaiters(server: string, entry: CatalogServerEntry): void {
    const set = this.waiters.get(server);
    if (!set) return;
    this.waiters.delete(server);
    for (const waiter of set) {
      clearTimeout(waiter.timer);
      waiter.resolve(entry);
    }
  }
}

/** A value that is not JSON is skipped like one that fails its schema: one bad write must not end the watch. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
