import type { ApprovalHookEvent, HookOutcome } from "@toolbus/policy";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { combineHookOutcomes, interpretHookOutcome } from "../../src/core/hook-outcome.js";
import type { HookRun } from "../../src/core/hook-run.js";

const label = "./guard.sh";
const run = (overrides: Partial<HookRun>): HookRun => ({
  hookLabel: label,
  exitCode: 0,
  stdout: "",
  stderr: "",
  timedOut: false,
  crashed: false,
  timeoutMs: 5000,
  ...overrides,
});
const json = (value: unknown) => run({ stdout: `${JSON.stringify(value)}\n` });
const denied = `hook "${label}" denied the tool call`;

describe("reading a PreToolUse hook", () => {
  it.each<{ name: string; run: HookRun; outcome: HookOutcome }>([
    {
      name: "permissionDecision allow, with its reason and a rewrite",
      run: json({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "allow",
          permissionDecisionReason: "safe path",
          updatedInput: { path: "/tmp/x" },
        },
      }),
      outcome: { kind: "allow", reason: "safe path", updatedInput: { path: "/tmp/x" } },
    },
    {
      name: "permissionDecision deny with its reason",
      run: json({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "deny",
          permissionDecisionReason: "no",
        },
      }),
      outcome: { kind: "deny", reason: "no" },
    },
    {
      name: "permissionDecision deny without a reason names the hook",
      run: json({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } }),
      outcome: { kind: "deny", reason: denied },
    },
    {
      name: "permissionDecision ask",
      run: json({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask" } }),
      outcome: { kind: "ask" },
    },
    {
      name: "the hook-specific answer wins over the legacy one",
      run: json({
        decision: "block",
        reason: "legacy",
        hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" },
      }),
      outcome: { kind: "allow" },
    },
    {
      name: "legacy approve",
      run: json({ decision: "approve", reason: "fine" }),
      outcome: { kind: "allow", reason: "fine" },
    },
    {
      name: "legacy block",
      run: json({ decision: "block", reason: "not here" }),
      outcome: { kind: "deny", reason: "not here" },
    },
    {
      name: "legacy block without a reason",
      run: json({ decision: "block" }),
      outcome: { kind: "deny", reason: denied },
    },
    {
      name: "continue false stops the call with its stopReason",
      run: json({ continue: false, stopReason: "halt", hookSpecificOutput: { permissionDecision: "allow" } }),
      outcome: { kind: "deny", reason: "halt" },
    },
    {
      name: "JSON with no decision decides nothing",
      run: json({ suppressOutput: true }),
      outcome: { kind: "none" },
    },
    {
      name: "exit 0 with plain text decides nothing",
      run: run({ stdout: "checked\n" }),
      outcome: { kind: "none" },
    },
    { name: "exit 0 with no output decides nothing", run: run({}), outcome: { kind: "none" } },
    {
      name: "exit 2 denies with stderr as the reason",
      run: run({ exitCode: 2, stderr: "rm -rf is not allowed\n", stdout: '{"decision":"approve"}' }),
      outcome: { kind: "deny", reason: "rm -rf is not allowed" },
    },
    {
      name: "exit 2 with empty stderr names the hook",
      run: run({ exitCode: 2 }),
      outcome: { kind: "deny", reason: denied },
    },
    {
      name: "another non-zero exit is a non-blocking error, JSON or not",
      run: run({ exitCode: 1, stderr: "oops", stdout: '{"decision":"block"}' }),
      outcome: { kind: "none", warning: 'hook "./guard.sh" exited with code 1: oops' },
    },
    {
      name: "a timeout denies, naming the hook and the limit (fail closed)",
      run: run({ exitCode: null, timedOut: true, timeoutMs: 5000 }),
      outcome: { kind: "deny", reason: 'hook "./guard.sh" timed out after 5 s' },
    },
    {
      name: "a hook that cannot start denies (fail closed)",
      run: run({ exitCode: null, crashed: true, error: "spawn ./guard.sh ENOENT" }),
      outcome: { kind: "deny", reason: 'hook "./guard.sh" failed to run: spawn ./guard.sh ENOENT' },
    },
    {
      name: "a crash without detail still names the hook",
      run: run({ exitCode: null, crashed: true }),
      outcome: { kind: "deny", reason: 'hook "./guard.sh" failed to run' },
    },
    {
      name: "invalid JSON is ignored with a warning",
      run: run({ stdout: "{not json" }),
      outcome: {
        kind: "none",
        warning: `hook "./guard.sh" printed invalid JSON (${jsonError("{not json")}); its output was ignored`,
      },
    },
    {
      name: "JSON of the wrong shape is ignored with a warning",
      run: json({ decision: 1 }),
      outcome: {
        kind: "none",
        warning:
          'hook "./guard.sh" printed JSON that is not a hook output (decision: Invalid input: expected string, received number); its output was ignored',
      },
    },
    {
      name: "an answer for another event is ignored",
      run: json({ hookSpecificOutput: { hookEventName: "PostToolUse", permissionDecision: "allow" } }),
      outcome: {
        kind: "none",
        warning:
          'hook "./guard.sh" answered for event "PostToolUse" during PreToolUse; its output was ignored',
      },
    },
    {
      name: "an unknown permissionDecision is ignored",
      run: json({ hookSpecificOutput: { permissionDecision: "defer" } }),
      outcome: {
        kind: "none",
        warning: 'hook "./guard.sh" returned an unknown permissionDecision "defer"; its output was ignored',
      },
    },
    {
      name: "a rewrite that is not an object is ignored",
      run: json({ hookSpecificOutput: { permissionDecision: "allow", updatedInput: [1] } }),
      outcome: {
        kind: "none",
        warning:
          'hook "./guard.sh" returned an updatedInput that is not a JSON object; its output was ignored',
      },
    },
  ])("$name", ({ run, outcome }) => {
    expect(interpretHookOutcome("PreToolUse", run)).toStrictEqual(outcome);
  });
});

describe("reading a PermissionRequest hook", () => {
  it.each<{ name: string; run: HookRun; outcome: HookOutcome }>([
    {
      name: "behavior allow, with a rewrite",
      run: json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "allow", updatedInput: { q: "safe" } },
        },
      }),
      outcome: { kind: "allow", updatedInput: { q: "safe" } },
    },
    {
      name: "behavior deny with its message",
      run: json({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "deny", message: "blocked" },
        },
      }),
      outcome: { kind: "deny", reason: "blocked" },
    },
    {
      name: "behavior deny without a message names the hook",
      run: json({
        hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny" } },
      }),
      outcome: { kind: "deny", reason: denied },
    },
    {
      name: "a PreToolUse-shaped answer is not read as a permission decision",
      run: json({ hookSpecificOutput: { permissionDecision: "allow" } }),
      outcome: { kind: "none" },
    },
    { name: "legacy approve", run: json({ decision: "approve" }), outcome: { kind: "allow" } },
    {
      name: "exit 2 denies",
      run: run({ exitCode: 2, stderr: "nope" }),
      outcome: { kind: "deny", reason: "nope" },
    },
    {
      name: "an unknown behavior is ignored",
      run: json({ hookSpecificOutput: { decision: { behavior: "ask" } } }),
      outcome: {
        kind: "none",
        warning: 'hook "./guard.sh" returned an unknown decision behavior "ask"; its output was ignored',
      },
    },
  ])("$name", ({ run, outcome }) => {
    expect(interpretHookOutcome("PermissionRequest", run)).toStrictEqual(outcome);
  });

  it("fails closed on a timeout for either event", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<ApprovalHookEvent>("PreToolUse", "PermissionRequest"),
        fc.integer({ min: 1, max: 600 }),
        fc.string(),
        (event, seconds, stdout) => {
          const outcome = interpretHookOutcome(
            event,
            run({ timedOut: true, timeoutMs: seconds * 1000, stdout }),
          );
          expect(outcome).toStrictEqual({
            kind: "deny",
            reason: `hook "./guard.sh" timed out after ${seconds} s`,
          });
        },
      ),
    );
  });
});

describe("combining the verdicts of several hooks", () => {
  const allow: HookOutcome = { kind: "allow", reason: "a1", updatedInput: { v: 1 } };
  const allowLater: HookOutcome = { kind: "allow", updatedInput: { v: 2 } };
  const ask: HookOutcome = { kind: "ask", reason: "check" };
  const denyFirst: HookOutcome = { kind: "deny", reason: "first" };
  const denySecond: HookOutcome = { kind: "deny", reason: "second" };
  const none: HookOutcome = { kind: "none", warning: "w" };

  it.each<{ name: string; outcomes: HookOutcome[]; combined: HookOutcome }>([
    { name: "deny beats ask and allow", outcomes: [allow, ask, denyFirst], combined: denyFirst },
    { name: "the first deny is kept", outcomes: [denyFirst, denySecond], combined: denyFirst },
    { name: "ask beats allow", outcomes: [allow, ask], combined: ask },
    {
      name: "allows merge: first reason, last rewrite",
      outcomes: [allow, none, allowLater],
      combined: { kind: "allow", reason: "a1", updatedInput: { v: 2 } },
    },
    { name: "nothing decided is none", outcomes: [none, none], combined: { kind: "none" } },
    { name: "no hooks is none", outcomes: [], combined: { kind: "none" } },
  ])("$name", ({ outcomes, combined }) => {
    expect(combineHookOutcomes(outcomes)).toStrictEqual(combined);
  });

  it("never lets an allow through when any hook denied, in any order", () => {
    const outcome = fc.constantFrom<HookOutcome>(allow, allowLater, ask, none, denyFirst);
    fc.assert(
      fc.property(fc.array(outcome), (outcomes) => {
        const anyDeny = outcomes.some((o) => o.kind === "deny");
        expect(combineHookOutcomes(outcomes).kind === "deny").toBe(anyDeny);
      }),
    );
  });
});

function jsonError(text: string): string {
  try {
    JSON.parse(text);
    return "";
  } catch (error) {
    return (error as Error).message;
  }
}
