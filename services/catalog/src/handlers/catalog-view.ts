/** `catalog.get`, `catalog.search` and `catalog.refresh`: the normalized view and re-listing. */
import {
  buildCatalogSnapshot,
  type CatalogGetRequest,
  type CatalogRefreshRequest,
  type CatalogRefreshResult,
  type CatalogSearchRequest,
  type CatalogSearchResult,
  type CatalogSnapshot,
  DEFAULT_SEARCH_LIMIT,
  type NamingOptions,
  searchCatalog,
  WireError,
} from "@toolbus/protocol";
import type { CatalogStore } from "../adapters/nats/catalog-store.js";
import type { ServerConnector } from "../connectors/server-connector.js";

export function catalogViewHandlers(deps: {
  store: CatalogStore;
  naming: NamingOptions;
  connectors: ReadonlyMap<string, ServerConnector>;
}) {
  const snapshot = async (exposure: "all" | "model", searchEnabled = false): Promise<CatalogSnapshot> => {
    // Read the revision first: entries read after it are at least that new.
    const revision = await deps.store.revision();
    const entries = await deps.store.readAll();
    return buildCatalogSnapshot(entries, { naming: deps.naming, revision, exposure, searchEnabled });
  };
  return {
    get: (request: CatalogGetRequest) => snapshot(request.exposure ?? "model"),
    async search(request: CatalogSearchRequest): Promise<CatalogSearchResult> {
      const view = await snapshot("model", true);
      return searchCatalog(view, request.query, {
        limit: request.limit ?? DEFAULT_SEARCH_LIMIT,
        ...(request.cursor !== undefined ? { cursor: request.cursor } : {}),
      });
    },
    async refresh(request: CatalogRefreshRequest): Promise<CatalogRefreshResult> {
      const targets =
        request.server === undefined ? [...deps.connectors.values()] : [deps.connectors.get(request.server)];
      if (targets.some((c) => c === undefined)) {
        throw new WireError(
          "bad_request",
          `unknown MCP server '${request.server}' (not served by this catalog replica)`,
        );
      }
      await Promise.all(targets.map((connector) => connector!.relist("refresh requested")));
      return { revision: await deps.store.revision() };
    },
  };
}
