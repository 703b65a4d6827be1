/**
 * The gateway's copy of the catalog's model view, kept by following the catalog bucket entry by
 * entry (as the dispatcher does) and normalizing locally with the protocol's pure code, so the
 * catalog's size is never limited by what one NATS message carries. Renamed into the
 * exposed-name table on every change; listeners hear about a new state only when what
 * `tools/list` answers actually changed. A watch that ends is followed again, with backoff.
 */

import { type Bus, followKv, type KvChange, type KvFollowing, type Logger } from "@toolbus/bus";
import {
  buildCatalogSnapshot,
  CATALOG_NAMING_KEY,
  type CatalogServerEntry,
  CatalogServerEntrySchema,
  type NamingOptions,
  RESOURCE_TOOL_NAMES,
  type Subjects,
  serverFromCatalogKey,
} from "@toolbus/protocol";
import { buildExposedNames, type NamingMode } from "../../core/exposed-names.js";
import { gatewayInstructions } from "../../core/gateway-instructions.js";
import { listedTools, listingKey } from "../../core/tool-listing.js";
import type { CatalogPort, CatalogState } from "../../ports.js";

/** The key the catalog writes its naming options under, once it has started. */

export interface CatalogViewOptions {
  bus: Bus;
  subjects: Subjects;
  naming: NamingMode;
  /** Offer the resource tools (`[gateway] resource_tools`). */
  resourceTools: boolean;
  logger: Logger;
  /** The longest wait between two attempts to follow the bucket again. */
  retryMaxMs: number;
  /** How long `current()` waits for the first state before it gives up. */
  firstLoadWaitMs: number;
  /** Called after the tool listing changed (not on the first load). */
  onListingChanged(state: CatalogState): void;
}

export class CatalogView implements CatalogPort {
  #state: CatalogState | undefined;
  #key: string | undefined;
  readonly #entries = new Map<string, CatalogServerEntry>();
  #namingOptions: NamingOptions | undefined;
  #revision = 0;
  #following: KvFollowing | undefined;
  #rebuild: NodeJS.Immediate | undefined;
  #retry: NodeJS.Timeout | undefined;
  #stopped = false;
  #failures = 0;
  readonly #waiters = new Set<() => void>();

  constructor(private readonly options: CatalogViewOptions) {}

  /** Starts following the bucket; resolves without waiting for it. */
  start(): void {
    void this.#follow();
  }

  get loaded(): boolean {
    return this.#state !== undefined;
  }

  async current(): Promise<CatalogState> {
    if (this.#state) return this.#state;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.options.firstLoadWaitMs);
      this.#waiters.add(done);
    });
    if (this.#state) return this.#state;
    throw new Error(
      `the toolbus catalog has not published its bucket ${this.options.subjects.kv.catalog} yet; check that the catalog service runs with TOOLBUS_PREFIX=${this.options.subjects.prefix}, then retry`,
    );
  }

  stop(): void {
    this.#stopped = true;
    this.#following?.stop();
    clearImmediate(this.#rebuild);
    clearTimeout(this.#retry);
    for (const waiter of [...this.#waiters]) waiter();
  }

  async #follow(): Promise<void> {
    const { bus, subjects, logger } = this.options;
    if (this.#stopped) return;
    // A state is built only once the new read is whole.
    this.#following?.stop();
    this.#following = undefined;
    try {
      this.#entries.clear();
      this.#following = await followKv({
        kv: await bus.kv(subjects.kv.catalog),
        jsm: await bus.jsm(),
        bucket: subjects.kv.catalog,
        apply: (change) => this.#apply(change),
        ended: (error) => {
          logger.warn({ err: error }, "the catalog watch ended; following the bucket again");
          this.#again();
        },
      });
    } catch (error) {
      this.#failures += 1;
      logger.warn(
        { err: error, failures: this.#failures },
        this.#state
          ? "could not follow the catalog bucket; keeping the last copy"
          : "could not follow the catalog bucket; retrying",
      );
      this.#again();
      return;
    }
    if (this.#stopped) {
      this.#following.stop();
      return;
    }
    this.#failures = 0;
    this.#revision = Math.max(this.#revision, this.#following.revision);
    this.#build();
  }

  /** Follows again after a delay: 1 s doubling up to `retryMaxMs`. */
  #again(): void {
    if (this.#stopped) return;
    const delay = Math.min(1_000 * 2 ** Math.max(0, this.#failures - 1), this.options.retryMaxMs);
    this.#retry = setTimeout(() => void this.#follow(), delay);
    this.#retry.unref();
  }

  #apply(change: KvChange): void {
    this.#revision = Math.max(this.#revision, change.revision);
    if (change.key === CATALOG_NAMING_KEY) {
      if (change.operation === "PUT") this.#namingOptions = (parseJson(change.value) ?? {}) as NamingOptions;
    } else {
      const server = serverFromCatalogKey(change.key);
      if (server === null) return;
      const parsed =
        change.operation === "PUT" ? CatalogServerEntrySchema.safeParse(parseJson(change.value)) : undefined;
      // A value that fails its schema is skipped like a deletion: one bad write must not end the view.
      if (parsed?.success) this.#entries.set(server, parsed.data);
      else this.#entries.delete(server);
    }
    // Changes that arrive together are built into one state.
    if (this.#following) this.#rebuild ??= setImmediate(() => this.#build());
  }

  #build(): void {
    this.#rebuild = undefined;
    // Until the catalog has written its naming options, it has not started: nothing to serve yet.
    if (this.#namingOptions === undefined) return;
    const { logger } = this.options;
    const snapshot = buildCatalogSnapshot([...this.#entries.values()], {
      naming: this.#namingOptions,
      revision: this.#revision,
      exposure: "model",
    });
    const resourceTools = this.options.resourceTools ? RESOURCE_TOOL_NAMES : [];
    const table = buildExposedNames(snapshot.tools, this.options.naming, new Set(resourceTools));
    const tools = listedTools(table, this.options.resourceTools);
    const instructions = gatewayInstructions(
      snapshot.servers.map((server) => ({ name: server.name, instructions: server.instructions })),
    );
    const key = listingKey(tools);
    const first = this.#state === undefined;
    const changed = !first && key !== this.#key;
    const readyServers = snapshot.servers
      .filter((server) => server.status === "ready")
      .map((server) => server.name);
    this.#state = { revision: snapshot.revision, readyServers, table, tools, resourceTools, instructions };
    this.#key = key;
    if (first) {
      logger.info({ revision: snapshot.revision, tools: tools.length }, "catalog loaded");
      for (const waiter of [...this.#waiters]) waiter();
    } else if (changed) {
      logger.info({ revision: snapshot.revision, tools: tools.length }, "tool listing changed");
      this.options.onListingChanged(this.#state);
    }
  }
}

/** A value that is not JSON counts as one that fails its schema. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
