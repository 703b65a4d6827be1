/** Memory citations: the streaming stripper, the body parser and the usage-id rules. */
export { parseCitationBodies } from "./citation-bodies.js";
export { type CitationStripper, createCitationStripper } from "./citation-stripper.js";
export {
  CITATION_CLOSE_TAG,
  CITATION_OPEN_TAG,
  type MemoryCitation,
  type MemoryCitationEntry,
  MemoryCitationEntrySchema,
  MemoryCitationSchema,
} from "./memory-citation.js";
export { stripProposedPlanBlocks } from "./proposed-plan.js";
export { type StripOptions, type StripResult, stripCitations } from "./strip-citations.js";
export { canonicalUuid, usageThreadIds } from "./thread-ids.js";
