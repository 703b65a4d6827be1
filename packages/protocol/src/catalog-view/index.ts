export {
  type CatalogBucketChange,
  CatalogCopy,
  type CatalogCopyUpdate,
  NamingOptionsSchema,
} from "./catalog-copy.js";
export { buildCatalogSnapshot, CatalogIndex, type SnapshotOptions, searchCatalog } from "./snapshot.js";
