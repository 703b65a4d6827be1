/**
 * The gateway's copy of the catalog's model view: fetched with `<prefix>.catalog.get`, renamed
 * into the exposed-name table, and fetched again when `<prefix>.events.catalog` says the
 * revision moved (and on a slow poll, for an event missed while disconnected). Listeners hear
 * about a new state only when what `tools/list` answers actually changed.
 */
import type { Subscription } from "@nats-io/transport-node";
import type { Bus, Logger } from "@toolbus/bus";
import { CatalogSnapshotSchema, type Subjects } from "@toolbus/protocol";
import { buildExposedNames, type NamingMode } from "../../core/exposed-names.js";
import { listedTools, listingKey } from "../../core/tool-listing.js";
import type { CatalogPort, CatalogState } from "../../ports.js";

export interface CatalogViewOptions {
  bus: Bus;
  subjects: Subjects;
  naming: NamingMode;
  logger: Logger;
  /** Re-fetch this often even without an event. */
  pollMs: number;
  /** How long `current()` waits for the first state before it gives up. */
  firstLoadWaitMs: number;
  /** Called after the tool listing changed (not on the first load). */
  onListingChanged(state: CatalogState): void;
}

export class CatalogView implements CatalogPort {
  #state: CatalogState | undefined;
  #key: string | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;
  #subscription: Subscription | undefined;
  #timer: NodeJS.Timeout | undefined;
  #failures = 0;
  readonly #waiters = new Set<() => void>();

  constructor(private readonly options: CatalogViewOptions) {}

  /** Starts listening and fetching; resolves without waiting for the catalog to answer. */
  start(): void {
    const { bus, subjects } = this.options;
    this.#subscription = bus.nc.subscribe(subjects.catalogEvent, { callback: () => this.refresh() });
    this.#timer = setInterval(() => this.refresh(), this.options.pollMs);
    this.#timer.unref();
    this.refresh();
  }

  get loaded(): boolean {
    return this.#state !== undefined;
  }

  async current(): Promise<CatalogState> {
    if (this.#state) return this.#state;
    this.refresh();
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
      `the toolbus catalog has not answered on ${this.options.subjects.catalogGet} yet; check that the catalog service runs with TOOLBUS_PREFIX=${this.options.subjects.prefix}, then retry`,
    );
  }

  /** Fetches now; a refresh asked for while one runs runs once more after it. */
  refresh(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#fetch().finally(() => {
      this.#running = undefined;
      if (this.#again) {
        this.#again = false;
        this.refresh();
      }
    });
  }

  stop(): void {
    this.#stopped = true;
    this.#subscription?.unsubscribe();
    clearInterval(this.#timer);
    for (const waiter of [...this.#waiters]) waiter();
  }

  async #fetch(): Promise<void> {
    const { bus, subjects, naming, logger } = this.options;
    let snapshot: import("@toolbus/protocol").CatalogSnapshot;
    try {
      snapshot = await bus.request(subjects.catalogGet, { exposure: "model" }, CatalogSnapshotSchema, {
        timeoutMs: 10_000,
      });
    } catch (error) {
      this.#failures += 1;
      // Before the first load, retry with backoff (1 s doubling up to the poll interval).
      const retryMs = Math.min(1_000 * 2 ** (this.#failures - 1), this.options.pollMs);
      logger.warn(
        { err: error, failures: this.#failures },
        this.#state
          ? "could not fetch the catalog; keeping the last copy"
          : `could not fetch the catalog; retrying in ${retryMs} ms`,
      );
      if (!this.#state && !this.#stopped) setTimeout(() => this.refresh(), retryMs).unref();
      return;
    }
    this.#failures = 0;
    // An older answer (a slow replica) never replaces a newer state.
    if (this.#state && snapshot.revision < this.#state.revision) return;
    const table = buildExposedNames(snapshot.tools, naming);
    const tools = listedTools(table);
    const key = listingKey(tools);
    const first = this.#state === undefined;
    const changed = !first && key !== this.#key;
    const readyServers = snapshot.servers
      .filter((server) => server.status === "ready")
      .map((server) => server.name);
    this.#state = { revision: snapshot.revision, readyServers, table, tools };
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
