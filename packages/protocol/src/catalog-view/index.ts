export { buildCatalogSnapshot, CatalogIndex, type SnapshotOptions, searchCatalog } from "./snapshot.js";
