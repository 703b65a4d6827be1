/**
 * Catalog naming: the pure rules that turn raw MCP tools into unique model-facing names, and
 * the per-tool rules (filter, visibility, parallel calls, exposure) read alongside them.
 */

export { canonicalJson } from "./canonical-json.js";
export {
  buildExposedNames,
  EXPOSED_NAME_LIMIT,
  EXPOSED_NAME_PATTERN,
  type ExposedNames,
  type ExposedNameTable,
  type ExposedTool,
  exposeNames,
  type NamedItem,
  type NamingMode,
  withExposedNames,
} from "./exposed-names.js";
export { type ExposureInput, ExposureKind, ExposureSurface, exposureFor } from "./exposure.js";
export { toolFingerprint } from "./fingerprint.js";
export { hookName } from "./hook-name.js";
export { MAX_COMPACT_SCHEMA_BYTES, NULL_ROOT_SCHEMA_ERROR } from "./model-schema.js";
export {
  MAX_NAMESPACE_DESCRIPTION_BYTES,
  type ModelInputSchema,
  modelInputSchema,
  namespaceDescription,
} from "./model-spec.js";
export { DEFAULT_NAME_LIMIT, MIN_NAME_LIMIT, normalizeCatalog } from "./normalize-catalog.js";
export { HASH_SUFFIX_LENGTH, MCP_PREFIX, NAME_DELIMITER, nameHash, sanitizeName } from "./sanitize.js";
export { type SearchTextInput, searchText } from "./search-text.js";
export { compareUtf8, takeBytesAtCharBoundary } from "./text.js";
export {
  isModelVisible,
  supportsParallelCalls,
  UNTRUSTED_META_KEYS,
  withoutUntrustedMeta,
} from "./tool-rules.js";
export type {
  CatalogInput,
  NamingOptions,
  NormalizedCatalog,
  NormalizedTool,
  RawTool,
  ToolAnnotations,
} from "./types.js";
