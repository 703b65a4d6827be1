import { describe, expect, it } from "vitest";
import {
  approvalOutcome,
  notAvailableMessage,
  staleCatalogMessage,
  toolCallErrorMessage,
} from "../../src/core/messages.js";

/** The reference's reviewer timeout text (docs/reference-behavior.md §4 step 5), as the model reads it. */
const REVIEW_TIMEOUT_TEXT =
  "The automatic permission approval review did not finish before its deadline. " +
  "Do not assume the action is unsafe based on the timeout alone. " +
  "You may retry once, or ask the user for guidance or explicit approval.";

describe("fixed messages", () => {
  it("[27] says a tool absent from the catalog is not available to the model", () => {
    expect(notAvailableMessage("s", "t")).toBe("MCP tool `s/t` is not available to the model");
  });

  it("[29] names the raw route of a call rejected as stale", () => {
    expect(staleCatalogMessage("s", "t")).toBe(
      "tool call rejected because the catalog changed after `s/t` was prepared",
    );
  });
});

describe("approvalOutcome", () => {
  it.each([
    { decision: "approved", outcome: { kind: "run" } },
    { decision: "approved_for_session", outcome: { kind: "run" } },
    { decision: "approved_always", outcome: { kind: "run" } },
    {
      decision: "denied",
      outcome: { kind: "skip", reason: "denied", message: "user rejected MCP tool call" },
    },
    {
      decision: "denied",
      message: "blocked by hook: no writes on Fridays",
      outcome: { kind: "skip", reason: "denied", message: "blocked by hook: no writes on Fridays" },
    },
    {
      decision: "abort",
      outcome: { kind: "skip", reason: "cancelled", message: "user cancelled MCP tool call" },
    },
    {
      decision: "abort",
      message: "ignored",
      outcome: { kind: "skip", reason: "cancelled", message: "user cancelled MCP tool call" },
    },
    {
      decision: "timed_out",
      outcome: { kind: "skip", reason: "timed_out", message: REVIEW_TIMEOUT_TEXT },
    },
    {
      decision: "timed_out",
      message: "nobody answered within 120 seconds",
      outcome: { kind: "skip", reason: "timed_out", message: REVIEW_TIMEOUT_TEXT },
    },
  ] as const)("[38 differs][42] $decision with message $message → $outcome.kind", (row) => {
    const reply =
      "message" in row ? { decision: row.decision, message: row.message } : { decision: row.decision };
    expect(approvalOutcome(reply)).toEqual(row.outcome);
  });
});

describe("toolCallErrorMessage", () => {
  const timeout = new Error("timed out awaiting tools/call after 300s");
  it.each([
    { name: "a string", error: "connection reset", text: "tool call error: connection reset" },
    { name: "an Error", error: timeout, text: "tool call error: timed out awaiting tools/call after 300s" },
    {
      name: "an Error with one cause",
      error: new Error("tool call failed for `docs/search`", { cause: timeout }),
      text: "tool call error: tool call failed for `docs/search`\n\nCaused by:\n    timed out awaiting tools/call after 300s",
    },
    {
      name: "an Error with a chain of causes",
      error: new Error("tool call failed for `docs/search`", {
        cause: new Error("transport closed", { cause: "EPIPE" }),
      }),
      text: "tool call error: tool call failed for `docs/search`\n\nCaused by:\n    0: transport closed\n    1: EPIPE",
    },
  ])("[30] formats $name", ({ error, text }) => {
    expect(toolCallErrorMessage(error)).toBe(text);
  });

  it("stops at a cause cycle", () => {
    const a = new Error("a");
    const b = new Error("b", { cause: a });
    a.cause = b;
    expect(toolCallErrorMessage(a)).toBe("tool call error: a\n\nCaused by:\n    b");
  });
});
