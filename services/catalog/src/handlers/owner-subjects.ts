/**
 * What the replica that owns a server answers on its subjects (`<prefix>.connector.<server>.*`,
 * the protocol's `internalSubjects(prefix).connectorOwner(server)`, in the server's own queue
 * group): any replica takes a public `catalog.*` request and hands the server's part to its
 * owner, so a catalog split with `--servers` still answers for every server. These schemas are
 * the requests and results of those subjects (INTERNAL_SUBJECTS names them).
 */
import { CompletionCompleteRequestSchema, PromptsGetRequestSchema, WireError } from "@toolbus/protocol";
import { z } from "zod";
import type { CatalogEntries, McpSession, OwnedServer } from "../ports.js";

export const OwnerListRequestSchema = z.object({
  kind: z.enum(["resources", "resourceTemplates"]),
  cursor: z.string().optional(),
  /** Every page, concurrently with other servers (the no-server form of the listing). */
  all: z.boolean().optional(),
});
export const OwnerListResultSchema = z.object({
  items: z.array(z.looseObject({})),
  nextCursor: z.string().optional(),
});
export const OwnerReadRequestSchema = z.object({ uri: z.string() });
export const OwnerReadResultSchema = z.object({ contents: z.array(z.looseObject({})) });
export const OwnerRefreshRequestSchema = z.object({});
export const OwnerRefreshResultSchema = z.object({});
/** Prompts are paged like resources: one page at `cursor`, or `all` of them. */
export const OwnerPromptsListRequestSchema = z.object({
  cursor: z.string().optional(),
  all: z.boolean().optional(),
});
export const OwnerPromptsGetRequestSchema = PromptsGetRequestSchema.omit({ server: true });
export const OwnerCompleteRequestSchema = CompletionCompleteRequestSchema.omit({ server: true });

/** The owner's connection to its server, or `server_not_ready` while it has none. */
export function readyConnection(connector: OwnedServer): McpSession {
  const mcp = connector.mcp;
  if (!mcp) {
    throw new WireError(
      "server_not_ready",
      `MCP server '${connector.settings.server}' was not ready for this step`,
    );
  }
  return mcp;
}

/** The catalog entry of a server a public request names; `bad_request` for one not served. */
export async function knownServer(store: CatalogEntries, server: string) {
  const entry = await store.read(server);
  if (!entry || entry.status === "disabled")
    throw new WireError("bad_request", `unknown MCP server '${server}'`);
  return entry;
}
