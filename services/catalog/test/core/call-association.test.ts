import { describe, expect, it } from "vitest";
import { associateCall, type CallInFlight, type RelationHint } from "../../src/core/call-association.js";

const first: CallInFlight = { progressToken: "toolbus-1", requestId: 7, callId: "call-a" };
const second: CallInFlight = { progressToken: "toolbus-2", requestId: 8, callId: "call-b" };
const unsent: CallInFlight = { progressToken: "toolbus-3" };

describe("associateCall", () => {
  it.each<[string, CallInFlight[], RelationHint, ReturnType<typeof associateCall>]>([
    [
      "the call of the related request",
      [first, second],
      { relatedRequestId: 8 },
      { kind: "call", call: second },
    ],
    [
      "the related request over any hint in _meta",
      [first, second],
      { relatedRequestId: 7, meta: { progressToken: "toolbus-2" } },
      { kind: "call", call: first },
    ],
    [
      "none when the related request is not a running call, even if only one runs",
      [first],
      { relatedRequestId: 3 },
      {
        kind: "none",
        why: "it was sent in the context of request 3, which is not one of this server's running tool calls",
      },
    ],
    [
      "the call of the progress token",
      [first, second],
      { meta: { progressToken: "toolbus-2" } },
      { kind: "call", call: second },
    ],
    [
      "the call of the callId",
      [first, second],
      { meta: { callId: "call-a" } },
      { kind: "call", call: first },
    ],
    [
      "none when the progress token names a call no longer running",
      [second],
      { meta: { progressToken: "toolbus-1" } },
      {
        kind: "none",
        why: `its _meta.progressToken "toolbus-1" names none of this server's running tool calls`,
      },
    ],
    ["the only call running, when nothing says", [unsent], {}, { kind: "call", call: unsent }],
    [
      "none when no call runs",
      [],
      { meta: { other: 1 } },
      { kind: "none", why: "no tool call of this server is running now" },
    ],
    [
      "none when several run and nothing says which",
      [first, second, unsent],
      {},
      {
        kind: "none",
        why:
          "3 of this server's tool calls are running and it does not say which one it belongs to " +
          "(send it in the context of its tools/call request, or with that call's progressToken in its _meta)",
      },
    ],
  ])("finds %s", (_what, calls, hint, expected) => {
    expect(associateCall(calls, hint)).toEqual(expected);
  });
});
