import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  encodeKeyToken,
  grantApplies,
  grantEffects,
  grantKeys,
  persistentKey,
  sessionKey,
  sessionKeyPrefix,
} from "../src/grant-keys.js";
import type { ApprovalMode, DecideResult } from "../src/types.js";

const identity = { threadId: "t-1", server: "docs", tool: "search" };

describe("grant keys", () => {
  it("put every session key of a thread under its prefix, and no other thread's", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), fc.string(), (a, b, tool) => {
        const key = sessionKey("auto", { threadId: a, server: "docs", tool });
        expect(key?.startsWith(sessionKeyPrefix(a))).toBe(true);
        expect(key?.startsWith(sessionKeyPrefix(b))).toBe(a === b);
      }),
    );
  });

  it.each<{ name: string; mode: ApprovalMode; input: Parameters<typeof sessionKey>[1]; keys: object }>([
    {
      name: "auto mode has both keys; no connector reads as an empty token",
      mode: "auto",
      input: identity,
      keys: { session: "t-1.docs.=.search", persistent: "docs.=.search" },
    },
    {
      name: "the connector is part of the identity",
      mode: "auto",
      input: { ...identity, connectorId: "conn_1" },
      keys: { session: "t-1.docs.conn_1.search", persistent: "docs.conn_1.search" },
    },
    {
      name: "a call outside any thread has no session key",
      mode: "auto",
      input: { server: "docs", tool: "search" },
      keys: { persistent: "docs.=.search" },
    },
    { name: "prompt mode remembers nothing", mode: "prompt", input: identity, keys: {} },
    { name: "writes mode remembers nothing", mode: "writes", input: identity, keys: {} },
    { name: "approve mode remembers nothing", mode: "approve", input: identity, keys: {} },
  ])("$name", ({ mode, input, keys }) => {
    expect(grantKeys(mode, input)).toEqual(keys);
  });

  it("escapes dots, spaces and non-ASCII so the key stays a valid KV key", () => {
    expect(sessionKey("auto", { threadId: "th.1", server: "docs", tool: "tool.two three é" })).toBe(
      "th=2E1.docs.=.tool=2Etwo=20three=20=C3=A9",
    );
    expect(persistentKey("auto", { server: "docs", connectorId: "a=b", tool: "x" })).toBe("docs.a=3Db.x");
  });

  it("encodes every token injectively into NATS KV key characters", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "grapheme" }), (a, b) => {
        const [ea, eb] = [encodeKeyToken(a), encodeKeyToken(b)];
        expect(ea).toMatch(/^[-_=A-Za-z0-9]+$/);
        expect(ea === eb).toBe(a === b);
      }),
    );
  });

  it("keeps distinct identities apart even when their parts contain separators", () => {
    const a = persistentKey("auto", { server: "s", connectorId: "a.b", tool: "c" });
    const b = persistentKey("auto", { server: "s", connectorId: "a", tool: "b.c" });
    expect(a).not.toBe(b);
  });
});

describe("a grant is bound to the tool definition it was given for", () => {
  it.each([
    { name: "same fingerprint applies", grant: { fingerprint: "f1" }, fingerprint: "f1", applies: true },
    {
      name: "a changed tool definition does not",
      grant: { fingerprint: "f1" },
      fingerprint: "f2",
      applies: false,
    },
    { name: "no grant does not", grant: undefined, fingerprint: "f1", applies: false },
  ])("$name", ({ grant, fingerprint, applies }) => {
    expect(grantApplies(grant, fingerprint)).toBe(applies);
  });
});

describe("grants a decision creates", () => {
  const keys = { session: "t.docs.=.search", persistent: "docs.=.search" };
  const grant = { fingerprint: "f1" };
  it.each<{ name: string; result: DecideResult; keys: object; effects: object }>([
    {
      name: "[39] allow for this session remembers the session key",
      result: { decision: "approved_for_session", source: "human" },
      keys,
      effects: { session: { key: keys.session, grant } },
    },
    {
      name: "[40 differs] allow always persists and also remembers for the session",
      result: { decision: "approved_always", source: "human" },
      keys,
      effects: { session: { key: keys.session, grant }, persistent: { key: keys.persistent, grant } },
    },
    {
      name: "allow always without a persistent key falls back to the session",
      result: { decision: "approved_always", source: "human" },
      keys: { session: keys.session },
      effects: { session: { key: keys.session, grant } },
    },
    {
      name: "allow for this session outside a thread remembers nothing",
      result: { decision: "approved_for_session", source: "human" },
      keys: { persistent: keys.persistent },
      effects: {},
    },
    {
      name: "a one-time allow remembers nothing",
      result: { decision: "approved", source: "human" },
      keys,
      effects: {},
    },
    {
      name: "a decline remembers nothing",
      result: { decision: "denied", source: "human", message: "user rejected MCP tool call" },
      keys,
      effects: {},
    },
    {
      name: "a decision read from the session store writes nothing back",
      result: { decision: "approved_for_session", source: "session" },
      keys,
      effects: {},
    },
    {
      name: "a decision read from the persistent store writes nothing back",
      result: { decision: "approved_always", source: "persistent" },
      keys,
      effects: {},
    },
  ])("$name", ({ result, keys, effects }) => {
    expect(grantEffects(result, keys, "f1")).toEqual(effects);
  });
});

describe("grants by principal", () => {
  const wipe = { server: "db", tool: "wipe", threadId: "t1" };

  it("keys the requester's own persistent grant apart from everyone's, which it also looks up", () => {
    expect(grantKeys("auto", { ...wipe, requestedBy: "carol" })).toEqual({
      session: "t1.db.=.wipe",
      persistent: "carol.db.=.wipe",
      everyone: "db.=.wipe",
    });
    // No requester (a single user, the CLI): everyone's key, as before.
    expect(grantKeys("auto", wipe)).toEqual({ session: "t1.db.=.wipe", persistent: "db.=.wipe" });
  });

  it("never lets a principal's key be another's or everyone's, whatever the names hold", () => {
    const keys = [
      persistentKey("auto", { server: "db", tool: "wipe", requestedBy: "carol" }),
      persistentKey("auto", { server: "db", tool: "wipe", requestedBy: "carol.db" }),
      persistentKey("auto", { server: "carol", connectorId: "db", tool: "wipe" }),
      persistentKey("auto", { server: "db", tool: "wipe" }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("writes 'allow always' under the requester's key, or everyone's when the answer says so", () => {
    const keys = grantKeys("auto", { ...wipe, requestedBy: "carol" });
    const always = { decision: "approved_always", source: "human" } as const;
    expect(grantEffects(always, keys, "f1").persistent?.key).toBe("carol.db.=.wipe");
    expect(grantEffects(always, keys, "f1", "everyone").persistent?.key).toBe("db.=.wipe");
  });
});
