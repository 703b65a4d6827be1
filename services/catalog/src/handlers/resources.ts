/**
 * Resources (docs/reference-behavior.md §8). The public `catalog.resources.*` subjects can be
 * served by any catalog replica; each hands the server's part to the replica that owns the
 * server over `<prefix>.connector.<server>.resources.*`, so scale-per-connector holds here too.
 */
import type { Bus, HandlerContext } from "@toolbus/bus";
import {
  internalSubjects,
  type ResourcesListRequest,
  type ResourcesListResult,
  type ResourcesReadRequest,
  type ResourcesReadResult,
  type ResourceTemplatesListRequest,
  type ResourceTemplatesListResult,
  WireError,
} from "@toolbus/protocol";
import type { z } from "zod";
import { isOversized, oversizedText } from "../core/mcp-errors.js";
import type { CatalogEntries, OwnedServer, ResourceOriginStore } from "../ports.js";
import {
  knownServer,
  type OwnerListRequestSchema,
  OwnerListResultSchema,
  type OwnerReadRequestSchema,
  OwnerReadResultSchema,
  readyConnection,
} from "./owner-subjects.js";

export type ResourceKind = "resources" | "resourceTemplates";

const METHOD: Record<ResourceKind, "resources/list" | "resources/templates/list"> = {
  resources: "resources/list",
  resourceTemplates: "resources/templates/list",
};

/** Served by the replica that owns the server. */
export function ownerHandlers(connector: OwnedServer) {
  const { server, toolTimeoutMs } = connector.settings;
  return {
    async list(
      request: z.output<typeof OwnerListRequestSchema>,
    ): Promise<z.output<typeof OwnerListResultSchema>> {
      const mcp = readyConnection(connector);
      const method = METHOD[request.kind];
      try {
        if (request.all) {
          const items =
            request.kind === "resources"
              ? await mcp.listResources(toolTimeoutMs)
              : await mcp.listResourceTemplates(toolTimeoutMs);
          return { items: items as Array<Record<string, unknown>> };
        }
        const page = await mcp.listPage(method, request.cursor, toolTimeoutMs);
        return {
          items: page.items as Array<Record<string, unknown>>,
          ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
        };
      } catch (error) {
        if (isOversized(error))
          throw new WireError("payload_too_large", `${method} failed: ${oversizedText(error)}`);
        throw new WireError("transport_error", `${method} failed: ${(error as Error).message}`);
      }
    },
    async read(
      request: z.output<typeof OwnerReadRequestSchema>,
    ): Promise<z.output<typeof OwnerReadResultSchema>> {
      const mcp = readyConnection(connector);
      try {
        const result = await mcp.readResource(request.uri, toolTimeoutMs);
        return {
          contents: (Array.isArray(result.contents) ? result.contents : []) as Array<Record<string, unknown>>,
        };
      } catch (error) {
        const context = `resources/read failed: resources/read failed for \`${server}\` (${request.uri})`;
        if (isOversized(error))
          throw new WireError("payload_too_large", `${context}: ${oversizedText(error)}`);
        throw new WireError("transport_error", `${context}: ${(error as Error).message}`);
      }
    },
  };
}

interface PublicDeps {
  bus: Bus;
  prefix: string;
  store: CatalogEntries;
  origins: ResourceOriginStore;
  /** Bounds waiting for an owner replica to answer. */
  timeoutMs: number;
}

function listHandler<K extends ResourceKind>(deps: PublicDeps, kind: K) {
  return async (
    request: { server?: string; cursor?: string },
    ctx: HandlerContext,
  ): Promise<{ nextCursor?: string } & Record<K, Array<Record<string, unknown>>>> => {
    if (request.cursor !== undefined && request.server === undefined) {
      throw new WireError("bad_request", "cursor can only be used when a server is specified");
    }
    if (request.server !== undefined) {
      await knownServer(deps.store, request.server);
      const page = await deps.bus.request(
        internalSubjects(deps.prefix).connectorOwner(request.server).resourcesList,
        { kind, ...(request.cursor !== undefined ? { cursor: request.cursor } : {}) },
        OwnerListResultSchema,
        { timeoutMs: deps.timeoutMs },
      );
      const items = page.items.map((item) => ({ server: request.server!, ...item }));
      return {
        [kind]: items,
        ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
      } as never;
    }
    const entries = (await deps.store.readAll()).filter((e) => e.status === "ready" && e.resourcesSupported);
    const listed = await Promise.all(
      entries.map(async (entry) => {
        try {
          const all = await deps.bus.request(
            internalSubjects(deps.prefix).connectorOwner(entry.server).resourcesList,
            { kind, all: true },
            OwnerListResultSchema,
            { timeoutMs: deps.timeoutMs },
          );
          return all.items.map((item) => ({ server: entry.server, ...item }));
        } catch (error) {
          ctx.logger.warn(
            { server: entry.server, err: error },
            `${METHOD[kind]} failed; the server is left out`,
          );
          return [];
        }
      }),
    );
    return { [kind]: listed.flat() } as never;
  };
}

export function publicHandlers(deps: PublicDeps) {
  return {
    list: listHandler(deps, "resources") as (
      r: ResourcesListRequest,
      c: HandlerContext,
    ) => Promise<ResourcesListResult>,
    templates: listHandler(deps, "resourceTemplates") as (
      r: ResourceTemplatesListRequest,
      c: HandlerContext,
    ) => Promise<ResourceTemplatesListResult>,
    async read(request: ResourcesReadRequest): Promise<ResourcesReadResult> {
      await knownServer(deps.store, request.server);
      if (request.originCallId !== undefined) {
        const origins = await deps.origins.forCall(request.server, request.originCallId);
        const allowed = origins.some((o) => o.server === request.server && o.uri === request.uri);
        if (!allowed) {
          throw new WireError(
            "unauthorized",
            `resource \`${request.uri}\` did not come from call \`${request.originCallId}\` on MCP server '${request.server}'; read it without originCallId or from the server that produced it`,
          );
        }
      }
      const read = await deps.bus.request(
        internalSubjects(deps.prefix).connectorOwner(request.server).resourcesRead,
        { uri: request.uri },
        OwnerReadResultSchema,
        { timeoutMs: deps.timeoutMs },
      );
      return {
        server: request.server,
        uri: request.uri,
        contents: read.contents as ResourcesReadResult["contents"],
        ...(request.originCallId !== undefined ? { originCallId: request.originCallId } : {}),
      };
    },
  };
}
