/** @toolbus/catalog: the catalog service, to run in-process (the all-in-one process, tests). */
export { type CatalogService, type CatalogServiceDeps, startCatalogService } from "./catalog-service.js";
export { catalogDefinition } from "./definition.js";
export { CATALOG_METRICS } from "./metrics.js";
