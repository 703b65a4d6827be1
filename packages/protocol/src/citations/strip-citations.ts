/**
 * Agent-message finalization (reference §9 "Where it is used"): the visible text of a whole
 * message (citations removed, and `<proposed_plan>` blocks too in plan mode), the citation it
 * carried, and the rule that a message with nothing visible left is no last agent message.
 */
import { parseCitationBodies } from "./citation-bodies.js";
import { createCitationStripper } from "./citation-stripper.js";
import type { MemoryCitation } from "./memory-citation.js";
import { stripProposedPlanBlocks } from "./proposed-plan.js";
import { trimRust } from "./rust-text.js";

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

/** The last agent message a finalized visible text gives: none when it is blank. */
export function lastAgentMessage(visibleText: string): string | null {
  return trimRust(visibleText) === "" ? null : visibleText;
}

/** Whether nothing visible remains once the hidden markup is removed (a citation-only reply). */
export function isBlankAfterStrip(text: string, options: StripOptions = {}): boolean {
  return lastAgentMessage(stripCitations(text, options).visibleText) === null;
}
