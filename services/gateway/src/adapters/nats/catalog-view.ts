/**
 * The gateway's copy of the catalog's model view, kept by the follower every catalog reader
 * shares (`CatalogFollower` of @toolbus/bus, as the dispatcher's) and normalized locally with the
 * protocol's pure code, so the catalog's size is never limited by what one NATS message carries.
 * Renamed into the exposed-name table on every change; listeners hear about a new state only
 * when what `tools/list` answers actually changed.
 */

import { type Bus, CatalogFollower, type Logger } from "@toolbus/bus";
import {
  buildCatalogSnapshot,
  buildExposedNames,
  type NamingMode,
  RESOURCE_TOOL_NAMES,
  type Subjects,
} from "@toolbus/protocol";
import { gatewayInstructions } from "../../core/gateway-instructions.js";
import { listedTools, listingKey } from "../../core/tool-listing.js";
import type { CatalogPort, CatalogState } from "../../ports.js";

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
  #rebuild: NodeJS.Immediate | undefined;
  readonly #waiters = new Set<() => void>();
  readonly #follower: CatalogFollower;

  constructor(private readonly options: CatalogViewOptions) {
    this.#follower = new CatalogFollower({
      bus: options.bus,
      bucket: options.subjects.kv.catalog,
      logger: options.logger,
      retryMaxMs: options.retryMaxMs,
      loaded: () => this.#build(),
      // Changes that arrive together are built into one state.
      changed: () => {
        this.#rebuild ??= setImmediate(() => this.#build());
      },
    });
  }

  /** Starts following the bucket; resolves without waiting for it. */
  start(): void {
    this.#follower.start();
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
    this.#follower.stop();
    clearImmediate(this.#rebuild);
    for (const waiter of [...this.#waiters]) waiter();
  }

  #build(): void {
    this.#rebuild = undefined;
    const copy = this.#follower.copy;
    // Until the catalog has written its naming options, it has not started: nothing to serve yet.
    if (copy?.naming === undefined) return;
    const { logger } = this.options;
    const snapshot = buildCatalogSnapshot([...copy.entries.values()], {
      naming: copy.naming,
      revision: this.#follower.revision,
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
    this.#state = { revision: snapshot.revision, table, tools, resourceTools, instructions };
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
