/** The Postgres adapters against a real database: migrations, the request table, wake-ups. */
import { createLogger } from "@toolbus/bus";
import { type ApprovalMode, buildApprovalRequest, type DecideResult } from "@toolbus/policy";
import { isolation, withPgSchema } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { decisionChannel, PgDecisionSignals } from "../../../src/adapters/pg/decision-signals.js";
import { MIGRATIONS, migrate } from "../../../src/adapters/pg/migrations.js";
import { PgPendingStore } from "../../../src/adapters/pg/pending-requests.js";
import { DecisionWaiters } from "../../../src/decision-waiters.js";
import type { NewPendingRecord } from "../../../src/ports.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

async function database(name: string) {
  const schema = await withPgSchema(provided().databaseUrl, name);
  cleanups.push(() => schema.drop());
  const pool = new pg.Pool({ connectionString: schema.url, max: 4 });
  cleanups.push(() => pool.end());
  return { schema, pool };
}

const NOW = Date.parse("2026-05-01T10:00:00.000Z");
const CALL_DIGEST = "c".repeat(64);

function record(callId: string, timeoutMs = 60_000, mode: ApprovalMode = "auto"): NewPendingRecord {
  return {
    request: buildApprovalRequest({
      callId,
      threadId: "t-1",
      server: "docs",
      tool: "search",
      hookName: "mcp__docs__search",
      arguments: { q: "x" },
      callDigest: CALL_DIGEST,
      mode,
      hasSessionKey: true,
      hasPersistentKey: true,
      now: NOW,
      timeoutMs,
    }),
    mode,
    keys: { session: "t-1.docs.=.search", persistent: "docs.=.search" },
    fingerprint: "f".repeat(64),
    callDigest: CALL_DIGEST,
    updatedArguments: { q: "rewritten" },
  };
}

const approved: DecideResult = {
  decision: "approved",
  source: "human",
  updatedArguments: { q: "rewritten" },
};

describe("approvals migrations", () => {
  it("apply once, even when two replicas start at the same time", async () => {
    const { pool, schema } = await database("migrate");
    const other = new pg.Pool({ connectionString: schema.url, max: 2 });
    cleanups.push(() => other.end());
    const applied = await Promise.all([migrate(pool), migrate(other)]);
    expect(applied.map((versions) => versions.join(",")).sort()).toEqual([
      "",
      MIGRATIONS.map((m) => m.version).join(","),
    ]);
    await expect(migrate(pool)).resolves.toEqual([]);
  });
});

describe("the pending request table", () => {
  it("stores a request once: a second create answers the first record", async () => {
    const { pool } = await database("create");
    await migrate(pool);
    const store = new PgPendingStore(pool, "unused", new DecisionWaiters());
    const first = record("call-1");
    await expect(store.create(first)).resolves.toEqual({
      created: true,
      record: { ...first, state: "pending" },
    });
    const again = { ...record("call-1"), fingerprint: "0".repeat(64) };
    await expect(store.create(again)).resolves.toEqual({
      created: false,
      record: { ...first, state: "pending" },
    });
  });

  it("keeps the call digest a request is bound to, and reads a row stored before it had one", async () => {
    const { pool } = await database("digest");
    await migrate(pool);
    const store = new PgPendingStore(pool, "unused", new DecisionWaiters());
    const bound = record("bound");
    await store.create(bound);
    await store.create(record("unbound"));
    await pool.query("UPDATE approval_requests SET call_digest = NULL WHERE call_id = 'unbound'");
    const { callDigest: _, ...unbound } = record("unbound");
    expect({
      bound: await store.find(bound.request.requestId),
      unbound: await store.find(unbound.request.requestId),
    }).toEqual({
      bound: { ...bound, state: "pending" },
      unbound: { ...unbound, state: "pending" },
    });
  });

  it("resolves a request once, and lists only requests still pending and in time", async () => {
    const { pool } = await database("settle");
    await migrate(pool);
    const store = new PgPendingStore(pool, "unused", new DecisionWaiters());
    const [a, b, c] = [record("a"), record("b"), record("c", 1_000)];
    for (const r of [a, b, c]) await store.create(r);

    await expect(store.settle(a.request.requestId, approved, "user")).resolves.toEqual({
      ...a,
      state: "resolved",
      result: approved,
      resolvedBy: "user",
    });
    await expect(store.settle(a.request.requestId, approved, "user")).resolves.toBeUndefined();
    await expect(store.listPending(NOW + 500)).resolves.toEqual([b.request, c.request]);
    await expect(store.listPending(NOW + 2_000)).resolves.toEqual([b.request]);
    await expect(store.overdue(NOW + 2_000, 10)).resolves.toEqual([c.request.requestId]);
  });

  it("wakes this replica's own waiters with the decision, with no notification to hear", async () => {
    const { pool } = await database("local wake");
    await migrate(pool);
    // Nobody listens on the channel: only the store itself can wake the waiters.
    const waiters = new DecisionWaiters();
    const store = new PgPendingStore(pool, "unheard", waiters);
    const [settled, answered] = [
      record("settled"),
      { ...record("answered large"), updatedArguments: { q: "x".repeat(9_000) } },
    ];
    for (const r of [settled, answered]) await store.create(r);
    const wakes = [settled, answered].map((r) => waiters.next(r.request.requestId));
    const other = waiters.next("mcp_tool_call_approval_other");
    let otherWoken = false;
    void other.promise.then(() => {
      otherWoken = true;
    });
    await store.settle(settled.request.requestId, approved, "user");
    await store.answer(answered.request.requestId, "allow", "oauth:rita", NOW);
    // Even a decision too large for a notification comes with the wake-up: no read needed.
    await expect(Promise.all(wakes.map((wake) => wake.promise))).resolves.toEqual([
      approved,
      {
        decision: "approved",
        source: "human",
        updatedArguments: { q: "x".repeat(9_000) },
        decidedBy: "oauth:rita",
      },
    ]);
    expect(otherWoken).toBe(false);
    other.cancel();
  });

  it("wakes another replica's waiters on any connection with the decision when a request is resolved", async () => {
    const { pool, schema } = await database("notify");
    await migrate(pool);
    const { store, signals } = await listening(pool, schema.url, "notify");
    const r = record("woken");
    await store.create(r);
    const woken = signals.next(r.request.requestId);
    const other = signals.next("mcp_tool_call_approval_other");
    let otherWoken = false;
    void other.promise.then(() => {
      otherWoken = true;
    });
    await store.settle(r.request.requestId, approved, "user");
    await expect(woken.promise).resolves.toEqual(approved);
    expect(otherWoken).toBe(false);
    other.cancel();
  });

  it("wakes another replica's waiters to read the decision again when it is too large to travel with the wake-up", async () => {
    const { pool, schema } = await database("notify large");
    await migrate(pool);
    const { store, signals } = await listening(pool, schema.url, "notify large");
    const large = { ...record("large"), updatedArguments: { q: "x".repeat(9_000) } };
    await store.create(large);
    const woken = signals.next(large.request.requestId);
    const resolved = {
      ...large,
      state: "resolved",
      result: {
        decision: "approved",
        source: "human",
        updatedArguments: { q: "x".repeat(9_000) },
        decidedBy: "oauth:rita",
      },
      resolvedBy: "oauth:rita",
    };
    await expect(store.answer(large.request.requestId, "allow", "oauth:rita", NOW)).resolves.toEqual(
      resolved,
    );
    await expect(woken.promise).resolves.toBeUndefined();
    await expect(store.find(large.request.requestId)).resolves.toEqual(resolved);
  });

  it("records an answer in one write with what the choice decides, and wakes another replica's waiters with it", async () => {
    const { pool, schema } = await database("answer");
    await migrate(pool);
    const { store, signals } = await listening(pool, schema.url, "answer");
    const r = record("answered");
    await store.create(r);
    const woken = signals.next(r.request.requestId);
    const forSession: DecideResult = {
      decision: "approved_for_session",
      source: "human",
      updatedArguments: { q: "rewritten" },
      // The answer names who gave it: the call's end event says who decided.
      decidedBy: "oauth:rita",
    };
    await expect(store.answer(r.request.requestId, "allow_session", "oauth:rita", NOW)).resolves.toEqual({
      ...r,
      state: "resolved",
      result: forSession,
      resolvedBy: "oauth:rita",
    });
    await expect(woken.promise).resolves.toEqual(forSession);
  });

  it.each([
    { name: "a second answer", callId: "twice", choice: "allow", at: NOW, before: "answer" },
    { name: "an answer at expiry", callId: "late", choice: "allow", at: NOW + 60_000, before: "nothing" },
    { name: "a choice not offered", callId: "prompted", choice: "allow_session", at: NOW, before: "nothing" },
    { name: "an answer to no request", callId: "missing", choice: "allow", at: NOW, before: "no request" },
    {
      name: "an answer to a request stored before choices were",
      callId: "old",
      choice: "allow",
      at: NOW,
      before: "forget",
    },
  ] as const)("changes nothing for $name", async ({ callId, choice, at, before }) => {
    const { pool } = await database(`answer ${callId}`);
    await migrate(pool);
    const store = new PgPendingStore(pool, "unused", new DecisionWaiters());
    // Mode prompt offers neither remembering choice.
    const r = record(callId, 60_000, callId === "prompted" ? "prompt" : "auto");
    if (before !== "no request") await store.create(r);
    if (before === "answer") await store.answer(r.request.requestId, "decline", "user", NOW);
    if (before === "forget") {
      await pool.query("UPDATE approval_requests SET decisions_by_choice = NULL WHERE request_id = $1", [
        r.request.requestId,
      ]);
    }
    const was = await store.find(r.request.requestId);
    await expect(store.answer(r.request.requestId, choice, "user", at)).resolves.toBeUndefined();
    await expect(store.find(r.request.requestId)).resolves.toEqual(was);
  });
});

/**
 * A store on one replica and the waiters of another, which hears its decisions only over
 * LISTEN on its own connection (`signals`).
 */
async function listening(pool: pg.Pool, url: string, name: string) {
  const channel = decisionChannel(isolation(name).prefix);
  const signals = new DecisionWaiters();
  const listener = new PgDecisionSignals(
    { connectionString: url },
    channel,
    signals,
    createLogger({ service: "t", version: "1", level: "silent" }),
  );
  await listener.start();
  cleanups.push(() => listener.close());
  return { store: new PgPendingStore(pool, channel, new DecisionWaiters()), signals };
}

describe("decision channels", () => {
  it("stay within Postgres's 63-byte identifier limit for long prefixes, and differ by prefix", () => {
    const long = (c: string) => c.repeat(64);
    expect([
      decisionChannel("toolbus"),
      decisionChannel(long("a")).length <= 63,
      decisionChannel(long("a")) === decisionChannel(long("b")),
    ]).toEqual(["toolbus_approval_decisions", true, false]);
  });
});
