/**
 * The dispatcher's local copy of the catalog, kept by the follower every catalog reader shares
 * (`CatalogFollower` of @toolbus/bus): calls resolve names and check revisions without a catalog
 * round trip. Also where a call waits for its server to become ready, or for a revision.
 */
import { type Bus, CatalogFollower, type Logger } from "@toolbus/bus";
import {
  buildCatalogSnapshot,
  type CatalogCopyUpdate,
  CatalogIndex,
  type CatalogServerEntry,
  type Tool,
} from "@toolbus/protocol";
import type { CatalogPort } from "../../ports.js";

type Waiter = { resolve: (entry: CatalogServerEntry | undefined) => void; timer: NodeJS.Timeout };
type RevisionWaiter = { revision: number; resolve: (reached: boolean) => void; timer: NodeJS.Timeout };

export class CatalogReplica implements CatalogPort {
  private index: CatalogIndex | undefined;
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly revisionWaiters = new Set<RevisionWaiter>();
  private readonly follower: CatalogFollower;

  private constructor(deps: { bus: Pick<Bus, "kv" | "jsm" | "nc">; bucket: string; logger: Logger }) {
    this.follower = new CatalogFollower({
      ...deps,
      loaded: (copy) => {
        this.index = undefined;
        for (const entry of copy.entries.values()) {
          if (entry.status === "ready") this.releaseWaiters(entry.server, entry);
        }
        this.releaseRevisionWaiters();
      },
      changed: (update) => {
        this.applied(update);
        this.releaseRevisionWaiters();
      },
    });
  }

  /** Reads the whole bucket, entry by entry, then follows every change after it. */
  static async open(deps: { bus: Pick<Bus, "kv" | "jsm" | "nc">; bucket: string; logger: Logger }) {
    const replica = new CatalogReplica(deps);
    await replica.follower.open();
    return replica;
  }

  /** The catalog revision this copy reflects. */
  get revision(): number {
    return this.follower.revision;
  }

  get catalog(): CatalogIndex {
    if (!this.index) {
      this.index = new CatalogIndex(
        buildCatalogSnapshot([...this.entries.values()], {
          naming: this.follower.copy?.naming ?? {},
          revision: this.revision,
          exposure: "all",
        }),
      );
    }
    return this.index;
  }

  server(name: string): CatalogServerEntry | undefined {
    return this.entries.get(name);
  }

  private get entries(): ReadonlyMap<string, CatalogServerEntry> {
    return this.follower.copy?.entries ?? new Map();
  }

  /** The raw tool as its server listed it (with `_meta`, which normalized entries leave out). */
  rawTool(server: string, name: string): Tool | undefined {
    return this.entries.get(server)?.tools.find((tool) => tool.name === name);
  }

  /** Resolves true once this copy reflects `revision`, false after `timeoutMs` without it. */
  waitForRevision(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.revision >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: RevisionWaiter = {
        revision,
        resolve,
        timer: setTimeout(() => {
          this.revisionWaiters.delete(waiter);
          resolve(this.revision >= revision);
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
    this.follower.stop();
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
      if (waiter.revision > this.revision) continue;
      clearTimeout(waiter.timer);
      this.revisionWaiters.delete(waiter);
      waiter.resolve(true);
    }
  }

  private applied(update: CatalogCopyUpdate): void {
    if (update.kind === "naming") this.index = undefined;
    if (update.kind !== "entry") return;
    const { entry, previous } = update;
    // Names only depend on the tool lists, so a status change keeps the built index.
    if (
      entry === undefined ||
      previous?.revision !== entry.revision ||
      previous.status === "disabled" ||
      entry.status === "disabled"
    ) {
      this.index = undefined;
    }
    if (entry?.status === "ready") this.releaseWaiters(update.server, entry);
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
