/**
 * A reader's copy of the catalog bucket (`<prefix>_catalog`), built change by change: one entry
 * per server under `server.<name>`, and the catalog's naming options under `naming`. Pure: the
 * follower of @toolbus/bus (`CatalogFollower`, what the dispatcher and the gateway run) feeds it
 * the bucket's changes, and it holds the one rule for a value that is not what its key promises.
 *
 * The rule: a value that fails its schema (not JSON, not an entry, an entry naming another server
 * than its key, naming options no catalog writes) is refused, and the key keeps its last good
 * value. Keeping is the safer side for calls: such a value comes from a catalog of another version
 * (a rolling upgrade) or from a connector with a bug. Dropping the entry would take the server's
 * tools out of every listing and refuse its calls as unknown, while the last good entry still
 * routes them, and routes them safely: a connector refuses a call prepared against a revision it
 * no longer serves (the stale check). A deletion is no malformed value: it removes the entry.
 */
import { z } from "zod";
import { CATALOG_NAMING_KEY } from "../access.js";
import { MIN_NAME_LIMIT } from "../naming/normalize-catalog.js";
import type { NamingOptions } from "../naming/types.js";
import { type CatalogServerEntry, CatalogServerEntrySchema } from "../schemas/catalog.js";
import { serverFromCatalogKey } from "../subjects.js";

/** The naming options the catalog writes under `naming` (`[catalog]` of toolbus.toml). */
export const NamingOptionsSchema = z.object({
  nameLimit: z.int().min(MIN_NAME_LIMIT).optional(),
  prefixMcp: z.boolean().optional(),
  nonPrefixedServers: z.array(z.string()).optional(),
});

/** One change of the bucket as a KV watch delivers it. */
export interface CatalogBucketChange {
  key: string;
  /** `PUT`, or `DEL` / `PURGE` for an entry that is gone. */
  operation: string;
  /** The value as text (empty for a deletion). */
  value: string;
}

/** What one change did to the copy. */
export type CatalogCopyUpdate =
  /** A server's entry was set, or removed (`entry` undefined). */
  | {
      kind: "entry";
      server: string;
      entry: CatalogServerEntry | undefined;
      previous: CatalogServerEntry | undefined;
    }
  | { kind: "naming"; naming: NamingOptions }
  /** The value was refused: the key keeps its last good value (`kept`: whether it had one). */
  | { kind: "refused"; key: string; problem: string; kept: boolean }
  /** A key that is neither a server entry nor the naming options: nothing changed. */
  | { kind: "other"; key: string };

export class CatalogCopy {
  readonly #entries = new Map<string, CatalogServerEntry>();
  #naming: NamingOptions | undefined;

  /** Every server's entry, by server name. */
  get entries(): ReadonlyMap<string, CatalogServerEntry> {
    return this.#entries;
  }

  /** The catalog's naming options; undefined until the catalog has written them (it has not started). */
  get naming(): NamingOptions | undefined {
    return this.#naming;
  }

  server(name: string): CatalogServerEntry | undefined {
    return this.#entries.get(name);
  }

  /**
   * Applies one change. `lastGood` is an older copy of the same bucket (one whose watch ended,
   * while this one is read again from the start): a refused value keeps the value it had there.
   */
  apply(change: CatalogBucketChange, lastGood?: CatalogCopy): CatalogCopyUpdate {
    if (change.key === CATALOG_NAMING_KEY) return this.#applyNaming(change, lastGood);
    const server = serverFromCatalogKey(change.key);
    if (server === null) return { kind: "other", key: change.key };
    const previous = this.#entries.get(server);
    if (change.operation !== "PUT") {
      this.#entries.delete(server);
      return { kind: "entry", server, entry: undefined, previous };
    }
    const parsed = CatalogServerEntrySchema.safeParse(parseJson(change.value));
    if (parsed.success && parsed.data.server === server) {
      this.#entries.set(server, parsed.data);
      return { kind: "entry", server, entry: parsed.data, previous };
    }
    const kept = previous ?? lastGood?.server(server);
    if (kept !== undefined) this.#entries.set(server, kept);
    const problem = parsed.success
      ? `the entry under ${change.key} names server ${JSON.stringify(parsed.data.server)}`
      : `not a catalog entry: ${schemaProblem(parsed.error)}`;
    return { kind: "refused", key: change.key, problem, kept: kept !== undefined };
  }

  #applyNaming(change: CatalogBucketChange, lastGood: CatalogCopy | undefined): CatalogCopyUpdate {
    // The catalog never deletes its options (only removing the whole prefix does): they stay.
    if (change.operation !== "PUT") return { kind: "other", key: change.key };
    const parsed = NamingOptionsSchema.safeParse(parseJson(change.value));
    if (parsed.success) {
      this.#naming = parsed.data;
      return { kind: "naming", naming: parsed.data };
    }
    this.#naming ??= lastGood?.naming;
    const problem = `not the catalog's naming options: ${schemaProblem(parsed.error)}`;
    return { kind: "refused", key: change.key, problem, kept: this.#naming !== undefined };
  }
}

/** The first issue, bounded: the value may be as large as the bucket allows. */
function schemaProblem(error: z.ZodError): string {
  const [first] = error.issues;
  if (first === undefined) return "invalid";
  const at = first.path.length > 0 ? `${first.path.join(".")}: ` : "";
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : "";
  return `${at}${first.message.slice(0, 200)}${more}`;
}

/** A value that is not JSON is refused like one that fails its schema. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
