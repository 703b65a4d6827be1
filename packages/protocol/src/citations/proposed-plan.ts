/**
 * Removing `<proposed_plan>` blocks from a finished plan-mode message (codex
 * `strip_proposed_plan_blocks`): a tag counts only on a line of its own (surrounding
 * whitespace allowed); the open and close lines and everything between are dropped, and a
 * block still open at the end drops the rest of the text.
 */
import { trimRust } from "./rust-text.js";

const PLAN_OPEN_TAG = "<proposed_plan>";
const PLAN_CLOSE_TAG = "</proposed_plan>";

export function stripProposedPlanBlocks(text: string): string {
  const kept: string[] = [];
  let inPlan = false;
  let lineStart = 0;
  while (lineStart < text.length) {
    const newline = text.indexOf("\n", lineStart);
    const lineEnd = newline === -1 ? text.length : newline + 1;
    const line = text.slice(lineStart, lineEnd);
    const slug = trimRust(newline === -1 ? line : line.slice(0, -1));
    if (!inPlan && slug === PLAN_OPEN_TAG) inPlan = true;
    else if (inPlan && slug === PLAN_CLOSE_TAG) inPlan = false;
    else if (!inPlan) kept.push(line);
    lineStart = lineEnd;
  }
  return kept.join("");
}
