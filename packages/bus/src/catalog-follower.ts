/**
 * Following the catalog bucket into a `CatalogCopy` (@toolbus/protocol, which holds the rule for
 * a value that fails its schema: the key keeps its last good value): how the dispatcher and the
 * gateway keep their copy of the catalog. Every entry is read first, then each change is applied.
 * A watch that ends is followed again (after 1 s, doubling up to `retryMaxMs`) into a fresh copy
 * that replaces the old one only once it is whole, so an entry deleted meanwhile is gone and the
 * old copy serves until then.
 */
import { CatalogCopy, type CatalogCopyUpdate } from "@toolbus/protocol";
import type { Logger } from "pino";
import type { Bus } from "./bus.js";
import { followKv, type KvFollowing } from "./kv-follow.js";

export interface CatalogFollowerOptions {
  bus: Pick<Bus, "kv" | "jsm" | "nc">;
  /** The catalog bucket (`subjects.kv.catalog`). */
  bucket: string;
  logger: Logger;
  /** The longest wait between two attempts to follow the bucket again; default 30 s. */
  retryMaxMs?: number;
  /** A whole read is in place: the first, or one after following again. */
  loaded?(copy: CatalogCopy): void;
  /** A change was applied to the copy in place, `revision` already counted. */
  changed?(update: CatalogCopyUpdate): void;
}

const DEFAULT_RETRY_MAX_MS = 30_000;

export class CatalogFollower {
  #copy: CatalogCopy | undefined;
  #revision = 0;
  #following: KvFollowing | undefined;
  /** Each attempt's number: callbacks of an attempt that was replaced are ignored. */
  #attempt = 0;
  #failures = 0;
  #retry: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(private readonly options: CatalogFollowerOptions) {}

  /** The copy in place; undefined until the first read is whole. */
  get copy(): CatalogCopy | undefined {
    return this.#copy;
  }

  /** The bucket revision the copy reflects (0 before the first read). */
  get revision(): number {
    return this.#revision;
  }

  /** Resolves once the first read is whole; rejects (following nothing) when it fails. */
  async open(): Promise<void> {
    await this.#follow();
  }

  /** Follows without waiting: a first read that fails is tried again too. */
  start(): void {
    void this.#follow().catch((error: unknown) => this.#failed(error));
  }

  stop(): void {
    this.#stopped = true;
    this.#attempt += 1;
    this.#following?.stop();
    clearTimeout(this.#retry);
  }

  async #follow(): Promise<void> {
    if (this.#stopped) return;
    const { bus, bucket, logger } = this.options;
    const attempt = ++this.#attempt;
    this.#following?.stop();
    this.#following = undefined;
    // The copy in place, for a refused value read again; let go once the new read is whole.
    let lastGood = this.#copy;
    const next = new CatalogCopy();
    let whole = false;
    const following = await followKv({
      kv: await bus.kv(bucket),
      jsm: await bus.jsm(),
      bucket,
      apply: (change) => {
        if (attempt !== this.#attempt) return;
        const update = next.apply(change, lastGood);
        if (update.kind === "refused") {
          logger.warn(
            { key: update.key, problem: update.problem, kept: update.kept },
            update.kept
              ? "refused a catalog value that fails its schema; keeping the last good one"
              : "refused a catalog value that fails its schema",
          );
        }
        if (!whole) return;
        this.#revision = Math.max(this.#revision, change.revision);
        this.options.changed?.(update);
      },
      ended: (error) => {
        if (attempt !== this.#attempt || this.#closing()) return;
        logger.warn({ err: error }, "the catalog watch ended; following the bucket again");
        this.#again();
      },
    });
    if (attempt !== this.#attempt) {
      following.stop();
      return;
    }
    this.#following = following;
    this.#failures = 0;
    whole = true;
    lastGood = undefined;
    this.#copy = next;
    this.#revision = Math.max(this.#revision, following.revision);
    this.options.loaded?.(next);
  }

  #failed(error: unknown): void {
    // A watch that ends because its connection drains is the process stopping, not a failure.
    if (this.#closing()) return;
    this.#failures += 1;
    this.options.logger.warn(
      { err: error, failures: this.#failures },
      this.#copy
        ? "could not follow the catalog bucket; keeping the last copy"
        : "could not follow the catalog bucket; retrying",
    );
    this.#again();
  }

  /** The bus drains or closed: the process stops, and nothing is followed again. */
  #closing(): boolean {
    const { nc } = this.options.bus;
    return nc.isClosed() || nc.isDraining();
  }

  /** Follows again after a delay: 1 s doubling up to `retryMaxMs`. */
  #again(): void {
    if (this.#stopped) return;
    clearTimeout(this.#retry);
    const max = this.options.retryMaxMs ?? DEFAULT_RETRY_MAX_MS;
    const delay = Math.min(1_000 * 2 ** Math.max(0, this.#failures - 1), max);
    this.#retry = setTimeout(() => this.start(), delay);
    this.#retry.unref();
  }
}
