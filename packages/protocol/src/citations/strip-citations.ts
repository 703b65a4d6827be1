/**
 * Agent-message finalization (docs/reference-behavior.md §9 "Where it is used"): the visible text of a whole
 * message (citations removed, and `<proposed_plan>` blocks too in plan mode) and the citation it
 * carried. Whether a blank visible text is still a message is the caller's call: toolbus has no
 * agent turn, so it keeps no last agent message.
 */
import { parseCitationBodies } from "./citation-bodies.js";
import { createCitationStripper } from "./citation-stripper.js";
import type { MemoryCitation } from "./memory-citation.js";
import { stripProposedPlanBlocks } from "./proposed-plan.js";

export interface StripOptions {
  /** The turn runs in plan mode: `<proposed_plan>` blocks are hidden too. */
  planMode?: boolean;
}

export interface StripResult {
  visibleText: string;
  citation: MemoryCitation | null;
}

/** Strips a complete message in one call; same result as streaming it through the stripper. */
export function stripCitations(text: string, options: StripOptions = {}): StripResult {
  const stripper = createCitationStripper();
  const withoutCitations = stripper.push(text) + stripper.finish();
  return {
    visibleText: options.planMode === true ? stripProposedPlanBlocks(withoutCitations) : withoutCitations,
    citation: parseCitationBodies(stripper.bodies),
  };
}
