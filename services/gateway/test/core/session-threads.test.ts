import { describe, expect, it } from "vitest";
import {
  callThread,
  rememberThread,
  sessionThreads,
  threadClaimRefusal,
} from "../../src/core/session-threads.js";

const SESSION = "4d2c9f0e-1b7a-4c1e-9a55-0c3f7e1d2b6a";

describe("the thread of a tools/call (checklist 28)", () => {
  it.each([
    { name: "no _meta: the session", meta: undefined, thread: { ok: true, threadId: SESSION, named: false } },
    {
      name: "_meta without threadId: the session",
      meta: { progressToken: 1 },
      thread: { ok: true, threadId: SESSION, named: false },
    },
    {
      name: "the client's thread",
      meta: { threadId: "codex-1" },
      thread: { ok: true, threadId: "codex-1", named: true },
    },
    {
      name: "the session's own id, named",
      meta: { threadId: SESSION },
      thread: { ok: true, threadId: SESSION, named: false },
    },
  ])("$name", ({ meta, thread }) => {
    expect(callThread(meta, SESSION)).toEqual(thread);
  });

  it.each([
    { value: 7, got: "number" },
    { value: "", got: "an empty string" },
    { value: "t".repeat(257), got: "257 characters" },
    { value: null, got: "null" },
  ])("refuses _meta.threadId $value, saying what it got", ({ value, got }) => {
    expect(callThread({ threadId: value }, SESSION)).toEqual({
      ok: false,
      message: `Invalid params: _meta.threadId must be a string of 1 to 256 characters naming your thread (got ${got}); leave it out to use the MCP session as the thread`,
    });
  });
});

describe("the threads a session remembers", () => {
  it("adds a new thread last and keeps a known one where it is", () => {
    expect([rememberThread(["a"], "b"), rememberThread(["a", "b"], "a")]).toEqual([
      { threads: ["a", "b"], released: [] },
      { threads: ["a", "b"], released: [] },
    ]);
  });

  it("lets the first named go past the limit", () => {
    expect(rememberThread(["a", "b", "c"], "d", 3)).toEqual({ threads: ["b", "c", "d"], released: ["a"] });
  });

  it("ends the session's own thread and its client's with the session", () => {
    expect([sessionThreads(SESSION, undefined), sessionThreads(SESSION, ["a", SESSION, "b"])]).toEqual([
      [SESSION],
      [SESSION, "a", "b"],
    ]);
  });
});

describe("whose a named thread is", () => {
  it("lets its principal use a thread it just bound or already held", () => {
    expect([threadClaimRefusal("claimed", "_meta.threadId"), threadClaimRefusal("held", "threadId")]).toEqual(
      [undefined, undefined],
    );
  });

  it("refuses another principal's thread for good, saying what to do on each path", () => {
    expect([threadClaimRefusal("taken", "_meta.threadId"), threadClaimRefusal("taken", "threadId")]).toEqual([
      {
        retryable: false,
        message:
          '_meta.threadId names a thread another principal (token) is using, and its "Allow for this session" grants are not yours; name a thread of your own, or leave it out to use this MCP session as the thread',
      },
      {
        retryable: false,
        message:
          'threadId names a thread another principal (token) is using, and its "Allow for this session" grants are not yours; name a thread of your own, or leave threadId out',
      },
    ]);
  });

  it("refuses, retryably, when whose it is could not be checked", () => {
    expect(threadClaimRefusal("unavailable", "threadId")).toEqual({
      retryable: true,
      message:
        "could not check which principal uses the thread threadId names (the gateway's session store or the approvals service did not answer); try again",
    });
  });
});
