/**
 * The rule for one server's entry in the catalog bucket: what a new listing or status
 * changes, and when nothing changed so nothing is written (docs/contract.md "Catalog": a replica
 * re-listing an unchanged server writes nothing; a server's `revision` moves only when its
 * tool list changes).
 */

import { type CatalogServerEntry, canonicalJson } from "@toolbus/protocol";

export type ServerEntry = CatalogServerEntry;
export type ServerState = CatalogServerEntry["status"];

/** Fields present with the value `undefined` are removed from the entry. */
export type EntryChange = Partial<Omit<ServerEntry, "server" | "revision" | "listedAt">> & {
  listedAt?: string;
};

/**
 * The entry to write, or undefined when the stored one already says the same thing.
 * `nextRevision` is the catalog revision this write will get if it happens.
 */
export function nextServerEntry(
  current: ServerEntry | undefined,
  base: Omit<ServerEntry, "revision" | "tools" | "status" | "listedAt">,
  change: EntryChange,
  nextRevision: number,
  now: string,
): ServerEntry | undefined {
  const tools = change.tools ?? current?.tools ?? [];
  const toolsChanged = current === undefined || canonicalJson(tools) !== canonicalJson(current.tools);
  const candidate: ServerEntry = {
    ...base,
    // What the server said at its last start-up holds until it starts again.
    ...(current?.instructions !== undefined ? { instructions: current.instructions } : {}),
    ...(current?.serverInfo !== undefined ? { serverInfo: current.serverInfo } : {}),
    ...(current ? { resourcesSupported: current.resourcesSupported } : {}),
    ...(current?.promptsSupported !== undefined ? { promptsSupported: current.promptsSupported } : {}),
    ...(current?.completionsSupported !== undefined
      ? { completionsSupported: current.completionsSupported }
      : {}),
    ...change,
    status: change.status ?? current?.status ?? "starting",
    tools,
    revision: toolsChanged ? nextRevision : current.revision,
    listedAt: change.listedAt ?? current?.listedAt ?? now,
  };
  // A change that names a field with no value clears it (a server that stopped sending instructions).
  for (const key of Object.keys(candidate) as Array<keyof ServerEntry>) {
    if (candidate[key] === undefined) delete candidate[key];
  }
  if (candidate.status !== "failed") {
    delete candidate.statusError;
    delete candidate.statusReason;
  }
  if (current && sameIgnoringListedAt(current, candidate)) return undefined;
  return candidate;
}

/**
 * Several replicas may serve one server. One that is (re)starting, or stops before it was
 * ready, must not overwrite the `ready` another replica wrote: those states are its own.
 */
export function shouldReportStatus(
  current: ServerEntry | undefined,
  status: ServerState | undefined,
): boolean {
  return !(current?.status === "ready" && (status === "starting" || status === "cancelled"));
}

function sameIgnoringListedAt(a: ServerEntry, b: ServerEntry): boolean {
  return canonicalJson({ ...a, listedAt: "" }) === canonicalJson({ ...b, listedAt: "" });
}
