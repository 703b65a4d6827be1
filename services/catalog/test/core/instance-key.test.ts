import { describe, expect, it } from "vitest";
import { instanceKey, makeRoom, NO_PRINCIPAL_KEY } from "../../src/core/instance-key.js";

describe("instanceKey", () => {
  it("keys a call by its requester per principal, and by its thread per session", () => {
    expect([
      instanceKey("principal", { callId: "c1", requestedBy: "oauth:ann", threadId: "t1" }),
      instanceKey("principal", { callId: "c1", threadId: "t1" }),
      instanceKey("session", { callId: "c1", requestedBy: "oauth:ann", threadId: "t1" }),
      instanceKey("session", { callId: "c1" }),
    ]).toEqual(["oauth:ann", NO_PRINCIPAL_KEY, "t1", "call:c1"]);
  });
});

describe("makeRoom", () => {
  it("has room under the bound, stops the least recently used idle instance at it, and is full when none is idle", () => {
    const use = (key: string, active: number, lastUsed: number) => ({ key, active, lastUsed });
    expect([
      makeRoom([use("a", 1, 0)], 2),
      makeRoom([use("a", 0, 20), use("b", 1, 5), use("c", 0, 10)], 3),
      makeRoom([use("a", 1, 0), use("b", 2, 0)], 2),
    ]).toEqual([{ kind: "room" }, { kind: "evict", key: "c" }, { kind: "full" }]);
  });
});
