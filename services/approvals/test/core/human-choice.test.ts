import {
  APPROVAL_MODES,
  type ApprovalChoice,
  type ApprovalMode,
  buildApprovalRequest,
  type DecideResult,
  type JsonValue,
} from "@toolbus/policy";
import { ApprovalChoice as ApprovalChoiceValues } from "@toolbus/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkResolution,
  choiceToDecision,
  decisionsByChoice,
  timedOutDecision,
} from "../../src/core/human-choice.js";

describe("a human's choice", () => {
  const rejected: DecideResult = {
    decision: "denied",
    source: "human",
    message: "user rejected MCP tool call",
  };
  const cancelled: DecideResult = {
    decision: "abort",
    source: "human",
    message: "user cancelled MCP tool call",
  };
  it.each<{ choice: ApprovalChoice; mode: ApprovalMode; result: DecideResult }>([
    { choice: "allow", mode: "auto", result: { decision: "approved", source: "human" } },
    { choice: "allow_session", mode: "auto", result: { decision: "approved_for_session", source: "human" } },
    { choice: "allow_always", mode: "auto", result: { decision: "approved_always", source: "human" } },
    { choice: "allow_session", mode: "prompt", result: { decision: "approved", source: "human" } },
    { choice: "allow_always", mode: "prompt", result: { decision: "approved", source: "human" } },
    { choice: "allow_session", mode: "writes", result: { decision: "approved", source: "human" } },
    { choice: "allow_always", mode: "writes", result: { decision: "approved", source: "human" } },
    { choice: "allow", mode: "prompt", result: { decision: "approved", source: "human" } },
    { choice: "decline", mode: "auto", result: rejected },
    { choice: "decline", mode: "prompt", result: rejected },
    { choice: "cancel", mode: "auto", result: cancelled },
    { choice: "cancel", mode: "writes", result: cancelled },
  ])("[38][41] $choice in mode $mode decides $result.decision", ({ choice, mode, result }) => {
    expect(choiceToDecision(choice, mode)).toStrictEqual(result);
  });

  it("passes a hook's rewrite of the arguments along with an approval, not with a refusal", () => {
    const rewrite = { path: "/safe" };
    expect(choiceToDecision("allow_session", "auto", rewrite)).toStrictEqual({
      decision: "approved_for_session",
      source: "human",
      updatedArguments: rewrite,
    });
    expect(choiceToDecision("decline", "auto", rewrite)).toStrictEqual(rejected);
  });

  it("[38 differs] reports an unanswered request as timed out, with the wait", () => {
    expect(timedOutDecision(600_000)).toStrictEqual({
      decision: "timed_out",
      source: "timeout",
      message: "MCP tool call approval timed out after 600 s without an answer",
    });
  });
});

describe("resolving a pending request", () => {
  const now = Date.parse("2026-01-01T00:00:00.000Z");
  const request = (mode: ApprovalMode) =>
    buildApprovalRequest({
      callId: "c1",
      server: "docs",
      tool: "t",
      hookName: "mcp__docs__t",
      arguments: {},
      callDigest: "d".repeat(64),
      mode,
      hasSessionKey: true,
      hasPersistentKey: true,
      now,
      timeoutMs: 60_000,
    });

  it.each<{ name: string; mode: ApprovalMode; choice: ApprovalChoice; at: number; result: object }>([
    {
      name: "an offered option resolves it",
      mode: "auto",
      choice: "allow_always",
      at: now,
      result: { ok: true },
    },
    {
      name: "decline is accepted though never listed",
      mode: "prompt",
      choice: "decline",
      at: now,
      result: { ok: true },
    },
    {
      name: "an option that was not offered is refused",
      mode: "prompt",
      choice: "allow_session",
      at: now,
      result: {
        ok: false,
        message:
          'choice "allow_session" was not offered by approval request mcp_tool_call_approval_c1; choose one of allow, cancel, decline',
      },
    },
    {
      name: "an expired request is refused",
      mode: "auto",
      choice: "allow",
      at: now + 60_000,
      result: {
        ok: false,
        message:
          "approval request mcp_tool_call_approval_c1 expired at 2026-01-01T00:01:00.000Z; the call was not run, so retry the tool call to get a new request",
      },
    },
  ])("$name", ({ mode, choice, at, result }) => {
    expect(checkResolution(request(mode), { state: "pending" }, choice, at)).toStrictEqual(result);
  });

  it("refuses a second answer and says what the first one decided", () => {
    expect(
      checkResolution(request("auto"), { state: "resolved", decision: "denied" }, "allow", now),
    ).toStrictEqual({
      ok: false,
      message:
        "approval request mcp_tool_call_approval_c1 was already resolved (denied); each request takes one answer",
    });
  });
});

describe("the decisions stored with a request", () => {
  const now = Date.parse("2026-01-01T00:00:00.000Z");

  it("hold, for exactly the choices the request accepts, what each decides", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...APPROVAL_MODES),
        fc.boolean(),
        fc.boolean(),
        fc.option(
          fc.json().map((text): JsonValue => JSON.parse(text)),
          { nil: undefined },
        ),
        (mode, hasSessionKey, hasPersistentKey, updatedArguments) => {
          const request = buildApprovalRequest({
            callId: "c1",
            server: "docs",
            tool: "t",
            hookName: "mcp__docs__t",
            arguments: {},
            callDigest: "d".repeat(64),
            mode,
            hasSessionKey,
            hasPersistentKey,
            now,
            timeoutMs: 60_000,
          });
          const expected: Partial<Record<ApprovalChoice, DecideResult>> = {};
          for (const choice of Object.values(ApprovalChoiceValues)) {
            if (checkResolution(request, { state: "pending" }, choice, now).ok) {
              expected[choice] = choiceToDecision(choice, mode, updatedArguments);
            }
          }
          expect(decisionsByChoice(request, mode, updatedArguments)).toStrictEqual(expected);
        },
      ),
    );
  });
});
