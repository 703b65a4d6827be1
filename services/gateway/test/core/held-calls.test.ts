import { describe, expect, it } from "vitest";
import { inputRequired, roundAnswers, singleRound } from "../../src/core/held-calls.js";

const round = {
  name: { method: "elicitation/create", params: { message: "Your name?" } },
  haiku: { method: "sampling/createMessage", params: { messages: [], maxTokens: 10 } },
  where: { method: "roots/list" },
  later: { method: "tasks/result", params: {} },
};
const answers = {
  name: { action: "accept", content: { name: "Ada" } },
  haiku: { role: "assistant", content: { type: "text", text: "pond" }, model: "m" },
  where: { roots: [] },
  later: { anything: true },
};

describe("a client's answers to a server's round", () => {
  it("takes one answer per question asked, in its shape, and leaves out keys the round did not ask", () => {
    expect(roundAnswers(round, { ...answers, extra: { action: "accept" } })).toEqual({
      ok: true,
      responses: answers,
    });
  });

  it.each([
    [
      "a question left out",
      { ...answers, where: undefined },
      "inputResponses.where must answer inputRequests.where (roots/list",
    ],
    [
      "an elicitation answered without an action",
      { ...answers, name: { content: {} } },
      "inputResponses.name must answer inputRequests.name (elicitation/create",
    ],
    [
      "a sampling answer without a model",
      { ...answers, haiku: { role: "assistant", content: {} } },
      "inputResponses.haiku must answer inputRequests.haiku (sampling/createMessage",
    ],
    [
      "roots that are not a list",
      { ...answers, where: { roots: "/" } },
      "inputResponses.where must answer inputRequests.where (roots/list",
    ],
  ])("refuses %s, naming the question", (_case, responses, message) => {
    const checked = roundAnswers(round, responses);
    expect(checked.ok ? "" : checked.message).toContain(message);
  });
});

describe("what a client is handed back", () => {
  it("a server's round as it asked it, under toolbus's requestState", () => {
    expect(inputRequired({ kind: "input", relayId: "r1", requests: round }, "key")).toEqual({
      resultType: "input_required",
      inputRequests: round,
      requestState: "key",
    });
  });

  it("a 2025 server's elicitation or sampling request as a round of one under its kind", () => {
    const relayed = { callId: "c1", server: "docs", relayId: "r1" };
    expect([
      singleRound(relayed, "elicitation/create", { message: "Which?" }).requests,
      singleRound(relayed, "sampling/createMessage", { messages: [], maxTokens: 5 }).requests,
    ]).toEqual([
      { elicitation: { method: "elicitation/create", params: { message: "Which?" } } },
      { sampling: { method: "sampling/createMessage", params: { messages: [], maxTokens: 5 } } },
    ]);
  });
});
