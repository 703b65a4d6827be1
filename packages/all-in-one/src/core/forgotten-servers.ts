/**
 * The servers an earlier configuration left on the bus: the all-in-one runs every server of its
 * prefix, so a catalog entry of a server its configuration no longer has is one nothing runs any
 * more (its tools would stay listed, and a call to one would wait for no answer).
 */
import { serverFromCatalogKey } from "@toolbus/protocol";

/** The servers named by `catalogKeys` (keys of the catalog bucket) that `configured` does not have, sorted. */
export function forgottenServers(catalogKeys: Iterable<string>, configured: Iterable<string>): string[] {
  const keep = new Set(configured);
  const gone = new Set<string>();
  for (const key of catalogKeys) {
    const server = serverFromCatalogKey(key);
    if (server !== null && !keep.has(server)) gone.add(server);
  }
  return [...gone].sort();
}
