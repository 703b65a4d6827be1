/** `catalog.get`, `catalog.search` and `catalog.refresh`: the normalized view and re-listing. */
import type { Bus, HandlerContext } from "@toolbus/bus";
import {
  buildCatalogSnapshot,
  type CatalogGetRequest,
  type CatalogRefreshRequest,
  type CatalogRefreshResult,
  type CatalogSearchRequest,
  type CatalogSearchResult,
  type CatalogSnapshot,
  DEFAULT_CATALOG_EXPOSURE,
  DEFAULT_SEARCH_LIMIT,
  internalSubjects,
  type NamingOptions,
  searchCatalog,
  WireError,
} from "@toolbus/protocol";
import type { CatalogEntries, OwnedServer } from "../ports.js";
import { OwnerRefreshResultSchema } from "./owner-subjects.js";

export interface CatalogViewDeps {
  bus: Bus;
  prefix: string;
  store: CatalogEntries;
  naming: NamingOptions;
  /** Bounds waiting for an owner replica's re-listing. */
  timeoutMs: number;
}

export function catalogViewHandlers(deps: CatalogViewDeps) {
  // A snapshot is a pure function of the bucket at a revision: built once per revision and view.
  let cachedRevision = -1;
  const cache = new Map<string, Promise<CatalogSnapshot>>();
  const snapshot = async (exposure: "all" | "model", searchEnabled = false): Promise<CatalogSnapshot> => {
    // Read the revision first: entries read after it are at least that new.
    const revision = await deps.store.revision();
    if (revision !== cachedRevision) {
      cache.clear();
      cachedRevision = revision;
    }
    const key = `${exposure}:${searchEnabled}`;
    let built = cache.get(key);
    if (!built) {
      built = deps.store
        .readAll()
        .then((entries) =>
          buildCatalogSnapshot(entries, { naming: deps.naming, revision, exposure, searchEnabled }),
        );
      cache.set(key, built);
      built.catch(() => cache.delete(key));
    }
    return built;
  };
  const relist = (server: string) =>
    deps.bus.request(
      internalSubjects(deps.prefix).connectorOwner(server).refresh,
      {},
      OwnerRefreshResultSchema,
      {
        timeoutMs: deps.timeoutMs,
      },
    );
  return {
    get: (request: CatalogGetRequest) => snapshot(request.exposure ?? DEFAULT_CATALOG_EXPOSURE),
    async search(request: CatalogSearchRequest): Promise<CatalogSearchResult> {
      const view = await snapshot("model", true);
      return searchCatalog(view, request.query, {
        limit: request.limit ?? DEFAULT_SEARCH_LIMIT,
        ...(request.cursor !== undefined ? { cursor: request.cursor } : {}),
      });
    },
    /** Any replica answers; the replica that owns each server re-lists it. */
    async refresh(request: CatalogRefreshRequest, ctx: HandlerContext): Promise<CatalogRefreshResult> {
      if (request.server !== undefined) {
        const entry = await deps.store.read(request.server);
        if (!entry || entry.status === "disabled") {
          throw new WireError("bad_request", `unknown MCP server '${request.server}'`);
        }
        await relist(request.server);
      } else {
        const servers = (await deps.store.readAll())
          .filter((e) => e.status !== "disabled")
          .map((e) => e.server);
        await Promise.all(
          servers.map((server) =>
            relist(server).catch((error: unknown) =>
              ctx.logger.warn({ server, err: error }, "re-listing failed; the server is left as it was"),
            ),
          ),
        );
      }
      return { revision: await deps.store.revision() };
    },
  };
}

/** `<prefix>.connector.<server>.refresh`, answered by the replica that owns the server. */
export function ownerRefreshHandler(connector: OwnedServer) {
  return async (): Promise<Record<string, never>> => {
    if (!connector.mcp) {
      throw new WireError(
        "server_not_ready",
        `MCP server '${connector.settings.server}' is not connected; it is listed again once it is ready`,
      );
    }
    await connector.relist("refresh requested");
    return {};
  };
}
