/**
 * What PostToolUse hooks decided about a finished call: `{block:false}` or `{block:true, reason}`
 * (the `toolbus.approvals.post_tool_use` reply). The tool already ran; blocking means the model
 * gets the reason instead of the result. A hook that times out or cannot run blocks (fail closed).
 */
import { blockingReason, failureReason, type HookRun, readHookStdout } from "./hook-run.js";

export type PostToolUseOutcome = { block: false } | { block: true; reason: string };

export function interpretPostToolUseOutcome(run: HookRun): PostToolUseOutcome {
  const fallback = `hook "${run.hookLabel}" blocked the tool result`;
  const failure = failureReason(run) ?? blockingReason(run, fallback);
  if (failure !== undefined) return { block: true, reason: failure };
  if (run.exitCode !== 0) return { block: false };
  const stdout = readHookStdout(run);
  if (stdout.kind !== "json") return { block: false };
  const { output } = stdout;
  const reason = (output.continue === false ? output.stopReason : output.reason)?.trim() || fallback;
  return output.continue === false || output.decision === "block"
    ? { block: true, reason }
    : { block: false };
}

/** The first block, in file order, wins. */
export function combinePostToolUseOutcomes(outcomes: readonly PostToolUseOutcome[]): PostToolUseOutcome {
  return outcomes.find((outcome) => outcome.block) ?? { block: false };
}
