/**
 * The stale-revision rule of docs/contract.md "Dispatch": a call prepared against a tool the
 * model saw in an older catalog is rejected before any server sees it. A caller that names
 * neither a fingerprint nor a revision is served against the current catalog.
 */
import { staleCatalogMessage } from "./messages.js";

/** What the model was shown (`ToolCallRequest`). */
export interface PreparedAgainst {
  toolFingerprint?: string;
  catalogRevision?: number;
}

/** The tool as the dispatcher's catalog copy has it now. */
export interface CurrentTool {
  fingerprint: string;
  /** The catalog revision at which the tool's server last changed its tool list. */
  serverRevision: number;
}

export type StaleCheck =
  | { kind: "ok" }
  | {
      kind: "stale";
      reason: "fingerprint" | "revision";
      prepared: PreparedAgainst;
      current: CurrentTool;
      message: string;
    };

export function checkStale(
  prepared: PreparedAgainst,
  current: CurrentTool,
  route: { server: string; rawTool: string },
): StaleCheck {
  const stale = (reason: "fingerprint" | "revision"): StaleCheck => ({
    kind: "stale",
    reason,
    prepared,
    current,
    message: staleCatalogMessage(route.server, route.rawTool),
  });
  if (prepared.toolFingerprint !== undefined && prepared.toolFingerprint !== current.fingerprint) {
    return stale("fingerprint");
  }
  if (prepared.catalogRevision !== undefined && current.serverRevision > prepared.catalogRevision) {
    return stale("revision");
  }
  return { kind: "ok" };
}
