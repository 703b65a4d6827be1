import { approvalCallDigest, callIdReusedMessage } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { bindingMismatch, callDigestOf } from "../src/call-binding.js";
import type { DecideRequest } from "../src/types.js";

const request: DecideRequest = {
  callId: "call-1",
  threadId: "t-1",
  server: "docs",
  tool: "search",
  hookName: "mcp__docs__search",
  arguments: { q: "x", limit: 3 },
  fingerprint: "f".repeat(64),
  catalogRevision: 3,
};
const digest = callDigestOf(request);

describe("callDigestOf", () => {
  it("is the protocol's digest of the request's server, raw tool, fingerprint and arguments", () => {
    expect(digest).toBe(
      approvalCallDigest({
        server: "docs",
        tool: "search",
        fingerprint: "f".repeat(64),
        arguments: { limit: 3, q: "x" },
      }),
    );
  });

  it("ignores what does not change the call: thread, turn, hook name, revision, display fields", () => {
    const retried: DecideRequest = {
      ...request,
      threadId: "t-2",
      turnId: "turn-9",
      hookName: "mcp__other__search",
      catalogRevision: 4,
      title: "Search",
      connectorName: "Docs",
    };
    expect(callDigestOf(retried)).toBe(digest);
  });
});

describe("bindingMismatch", () => {
  it.each([
    { name: "the same call re-attaches", stored: digest, expected: undefined },
    {
      name: "another call with the callId is refused, saying to use a new callId",
      stored: callDigestOf({ ...request, arguments: { q: "y", limit: 3 } }),
      expected: callIdReusedMessage("call-1"),
    },
    {
      name: "a request stored before requests were bound answers no call",
      stored: undefined,
      expected:
        'callId "call-1" has an approval request stored before requests were bound to their call, so it cannot be told apart from another call; this call did not run; send it with a new callId',
    },
  ])("$name", ({ stored, expected }) => {
    expect(bindingMismatch("call-1", stored, digest)).toBe(expected);
  });
});
