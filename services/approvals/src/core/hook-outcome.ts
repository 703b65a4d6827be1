/**
 * What a PreToolUse or PermissionRequest hook decided, read from its run the way Claude Code reads
 * it, and how the verdicts of several hooks on one call combine (deny > ask > allow > none).
 * Unlike Claude Code, a hook that times out or cannot run denies the call (fail closed).
 */
import type { ApprovalHookEvent, HookOutcome } from "@toolbus/policy";
import {
  blockingReason,
  failureReason,
  type HookJsonOutput,
  type HookRun,
  isJsonObject,
  readHookStdout,
} from "./hook-run.js";

export function interpretHookOutcome(event: ApprovalHookEvent, run: HookRun): HookOutcome {
  const failure = failureReason(run);
  if (failure !== undefined) return { kind: "deny", reason: failure };
  const fallback = defaultDenyReason(run.hookLabel);
  const blocked = blockingReason(run, fallback);
  if (blocked !== undefined) return { kind: "deny", reason: blocked };
  if (run.exitCode !== 0) {
    const stderr = run.stderr.trim();
    return {
      kind: "none",
      warning: `hook "${run.hookLabel}" exited with code ${run.exitCode}${stderr === "" ? "" : `: ${stderr}`}`,
    };
  }
  const stdout = readHookStdout(run);
  switch (stdout.kind) {
    case "text":
      return { kind: "none" };
    case "invalid":
      return { kind: "none", warning: stdout.warning };
    case "json":
      return fromJson(event, stdout.output, run.hookLabel);
  }
}

function fromJson(event: ApprovalHookEvent, output: HookJsonOutput, label: string): HookOutcome {
  const fallback = defaultDenyReason(label);
  // `continue: false` stops the agent in Claude Code; for a single call the nearest thing is a no.
  if (output.continue === false) return { kind: "deny", reason: nonEmpty(output.stopReason) ?? fallback };
  const specific = output.hookSpecificOutput;
  if (specific?.hookEventName !== undefined && specific.hookEventName !== event) {
    return ignored(label, `answered for event "${specific.hookEventName}" during ${event}`);
  }
  if (event === "PreToolUse" && specific?.permissionDecision !== undefined) {
    const reason = nonEmpty(specific.permissionDecisionReason);
    switch (specific.permissionDecision) {
      case "deny":
        return { kind: "deny", reason: reason ?? fallback };
      case "allow":
      case "ask":
        return withUpdatedInput(
          { kind: specific.permissionDecision, ...(reason && { reason }) },
          specific,
          label,
        );
      default:
        return ignored(label, `returned an unknown permissionDecision "${specific.permissionDecision}"`);
    }
  }
  if (event === "PermissionRequest" && specific?.decision !== undefined) {
    const decision = specific.decision;
    switch (decision.behavior) {
      case "deny":
        return { kind: "deny", reason: nonEmpty(decision.message) ?? fallback };
      case "allow":
        return withUpdatedInput({ kind: "allow" }, decision, label);
      default:
        return ignored(label, `returned an unknown decision behavior "${decision.behavior}"`);
    }
  }
  // The legacy top-level form, still honoured by Claude Code.
  const reason = nonEmpty(output.reason);
  switch (output.decision) {
    case undefined:
      return { kind: "none" };
    case "approve":
      return { kind: "allow", ...(reason && { reason }) };
    case "block":
      return { kind: "deny", reason: reason ?? fallback };
    default:
      return ignored(label, `returned an unknown decision "${output.decision}"`);
  }
}

function withUpdatedInput(
  outcome: { kind: "allow" | "ask"; reason?: string },
  source: { updatedInput?: unknown },
  label: string,
): HookOutcome {
  if (source.updatedInput === undefined) return outcome;
  if (!isJsonObject(source.updatedInput)) {
    return ignored(label, "returned an updatedInput that is not a JSON object");
  }
  return { ...outcome, updatedInput: source.updatedInput };
}

/**
 * Several hooks on one call: any deny wins (the first, in file order); else any ask; else any
 * allow. The winner's input rewrite is the last one given among hooks of its kind.
 */
export function combineHookOutcomes(outcomes: readonly HookOutcome[]): HookOutcome {
  const deny = outcomes.find((outcome) => outcome.kind === "deny");
  if (deny !== undefined) return deny;
  for (const kind of ["ask", "allow"] as const) {
    const same = outcomes.filter(
      (outcome): outcome is Extract<HookOutcome, { kind: "allow" | "ask" }> => outcome.kind === kind,
    );
    if (same.length === 0) continue;
    const reason = same.find((outcome) => outcome.reason !== undefined)?.reason;
    const updatedInput = same.findLast((outcome) => outcome.updatedInput !== undefined)?.updatedInput;
    return {
      kind,
      ...(reason === undefined ? {} : { reason }),
      ...(updatedInput === undefined ? {} : { updatedInput }),
    };
  }
  return { kind: "none" };
}

function defaultDenyReason(label: string): string {
  return `hook "${label}" denied the tool call`;
}

function ignored(label: string, why: string): HookOutcome {
  return { kind: "none", warning: `hook "${label}" ${why}; its output was ignored` };
}

function nonEmpty(text: string | undefined): string | undefined {
  const trimmed = text?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}
