import { describe, expect, it } from "vitest";
import { callIdentity, createCallDeduper } from "../../src/core/call-deduper.js";
import { parseToolArguments } from "../../src/core/tool-arguments.js";

/** One identity for every call of the tests that are about call ids alone. */
const SAME = "same-call";
const refuse = (): never => {
  throw new Error("a call id reused for another call was refused");
};

function clock() {
  let t = 0;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A call that counts how often it really ran. */
function counted<T>(value: T) {
  const calls = { count: 0 };
  const fn = async () => {
    calls.count++;
    return value;
  };
  return { calls, fn };
}

describe("createCallDeduper", () => {
  it("gives a repeat of an in-flight call id the first call's promise", async () => {
    const time = clock();
    const dedupe = createCallDeduper({ ttlMs: 1_000, maxEntries: 10, now: time.now });
    const first = deferred<string>();
    const second = counted("second");
    const a = dedupe.run("c1", SAME, () => first.promise, refuse);
    const b = dedupe.run("c1", SAME, second.fn, refuse);
    first.resolve("first");
    expect({ same: a === b, results: await Promise.all([a, b]), reruns: second.calls.count }).toEqual({
      same: true,
      results: ["first", "first"],
      reruns: 0,
    });
  });

  it("answers a repeat within the ttl after the call finished, and runs again after it", async () => {
    const time = clock();
    const dedupe = createCallDeduper({ ttlMs: 1_000, maxEntries: 10, now: time.now });
    const { calls, fn } = counted("done");
    await dedupe.run("c1", SAME, fn, refuse);
    time.advance(999);
    await dedupe.run("c1", SAME, fn, refuse);
    const withinTtl = calls.count;
    time.advance(1);
    await dedupe.run("c1", SAME, fn, refuse);
    expect({ withinTtl, afterTtl: calls.count }).toEqual({ withinTtl: 1, afterTtl: 2 });
  });

  it("shares a failure too, and turns a synchronous throw into a rejection", async () => {
    const time = clock();
    const dedupe = createCallDeduper({ ttlMs: 1_000, maxEntries: 10, now: time.now });
    const boom = new Error("boom");
    const first = dedupe.run(
      "c1",
      SAME,
      () => {
        throw boom;
      },
      refuse,
    );
    const repeat = dedupe.run("c1", SAME, async () => "never", refuse);
    await expect(first).rejects.toBe(boom);
    await expect(repeat).rejects.toBe(boom);
  });

  it("forgets a failed call once it settled, so a retry of its callId runs (the failure said: send it again)", async () => {
    const dedupe = createCallDeduper({ ttlMs: 60_000, maxEntries: 10, now: clock().now });
    const unavailable = new Error("the call ledger did not answer; send it again");
    await expect(dedupe.run("c1", SAME, async () => Promise.reject(unavailable), refuse)).rejects.toBe(
      unavailable,
    );
    expect({ retried: await dedupe.run("c1", SAME, async () => "ran", refuse), held: dedupe.size }).toEqual({
      retried: "ran",
      held: 1,
    });
  });

  it("keeps distinct call ids apart", async () => {
    const dedupe = createCallDeduper({ ttlMs: 1_000, maxEntries: 10, now: clock().now });
    expect(
      await Promise.all([
        dedupe.run("a", SAME, async () => 1, refuse),
        dedupe.run("b", SAME, async () => 2, refuse),
      ]),
    ).toEqual([1, 2]);
  });

  it("holds at most maxEntries, forgetting finished calls oldest first before in-flight ones", async () => {
    const time = clock();
    const dedupe = createCallDeduper({ ttlMs: 60_000, maxEntries: 2, now: time.now });
    const inFlight = deferred<string>();
    const pending = dedupe.run("slow", SAME, () => inFlight.promise, refuse);
    await dedupe.run("done-1", SAME, async () => "1", refuse);
    await dedupe.run("done-2", SAME, async () => "2", refuse);
    const sizeAfterThree = dedupe.size;
    const { calls, fn } = counted("again");
    const slowRepeat = dedupe.run("slow", SAME, fn, refuse);
    const done2Repeat = await dedupe.run("done-2", SAME, fn, refuse);
    const done1Repeat = await dedupe.run("done-1", SAME, fn, refuse);
    inFlight.resolve("slow");
    expect({
      sizeAfterThree,
      slowShared: slowRepeat === pending,
      done2Repeat,
      done1Repeat,
      reruns: calls.count,
      size: dedupe.size,
    }).toEqual({
      sizeAfterThree: 2,
      slowShared: true,
      done2Repeat: "2",
      done1Repeat: "again",
      reruns: 1,
      size: 2,
    });
  });

  it("drops the oldest in-flight call when every entry is in flight", async () => {
    const dedupe = createCallDeduper({ ttlMs: 60_000, maxEntries: 1, now: clock().now });
    const first = deferred<string>();
    dedupe.run("a", SAME, () => first.promise, refuse);
    dedupe.run("b", SAME, () => new Promise<string>(() => {}), refuse);
    const { calls, fn } = counted("rerun");
    const again = await dedupe.run("a", SAME, fn, refuse);
    first.resolve("a");
    expect({ again, reruns: calls.count, size: dedupe.size }).toEqual({ again: "rerun", reruns: 1, size: 1 });
  });
});

describe("a call id reused for another call", () => {
  it("is refused while the first is in flight and after it finished, runs nothing, and the same call still gets the first answer", async () => {
    const time = clock();
    const dedupe = createCallDeduper({ ttlMs: 1_000, maxEntries: 10, now: time.now });
    const first = deferred<string>();
    const other = counted("other");
    const a = dedupe.run(
      "c1",
      "call-a",
      () => first.promise,
      () => "refused",
    );
    const whileInFlight = await dedupe.run("c1", "call-b", other.fn, () => "refused");
    first.resolve("first");
    await a;
    const afterwards = await dedupe.run("c1", "call-b", other.fn, () => "refused");
    const same = await dedupe.run("c1", "call-a", other.fn, () => "refused");
    expect({ whileInFlight, afterwards, same, otherRuns: other.calls.count }).toEqual({
      whileInFlight: "refused",
      afterwards: "refused",
      same: "first",
      otherRuns: 0,
    });
  });

  it("runs as a new call once the first is forgotten", async () => {
    const time = clock();
    const dedupe = createCallDeduper({ ttlMs: 1_000, maxEntries: 10, now: time.now });
    await dedupe.run(
      "c1",
      "call-a",
      async () => "first",
      () => "refused",
    );
    time.advance(1_000);
    const later = await dedupe.run(
      "c1",
      "call-b",
      async () => "second",
      () => "refused",
    );
    const sameAsFirst = await dedupe.run(
      "c1",
      "call-a",
      async () => "third",
      () => "refused",
    );
    expect({ later, sameAsFirst }).toEqual({ later: "second", sameAsFirst: "refused" });
  });
});

describe("what a settled call is remembered as", () => {
  it("is what it is told (where a large reply was stored), for that call only and only once it settled", async () => {
    const time = clock();
    const dedupe = createCallDeduper({ ttlMs: 1_000, maxEntries: 10, now: time.now });
    const pending = deferred<string>();
    const running = dedupe.run("c1", SAME, () => pending.promise, refuse);
    dedupe.remember("c1", SAME, "too early");
    pending.resolve("the reply");
    await running;
    dedupe.remember("c1", "another call", "not its own");
    dedupe.remember("c1", SAME, "stored");
    const again = counted("ran again");
    expect(await dedupe.run("c1", SAME, again.fn, refuse)).toBe("stored");
    expect(again.calls.count).toBe(0);
  });
});

describe("callIdentity", () => {
  const identity = (tool: string | { namespace: string; name: string }, text: string) =>
    callIdentity(tool, parseToolArguments(text), text);

  it("is the same for the same tool and arguments, whatever their key order and whitespace", () => {
    expect(identity("mcp__s__t", '{"a":1,"b":{"c":2,"d":[1,2]}}')).toBe(
      identity("mcp__s__t", ' { "b": {"d": [1, 2], "c": 2}, "a": 1 }\n'),
    );
  });

  it("differs for another tool, other arguments, no arguments, or the tool named another way", () => {
    const identities = [
      identity("mcp__s__t", '{"a":1}'),
      identity("mcp__s__u", '{"a":1}'),
      identity("mcp__s__t", '{"a":2}'),
      identity("mcp__s__t", '{"a":"1"}'),
      identity("mcp__s__t", "{}"),
      identity("mcp__s__t", ""),
      identity("mcp__s__t", "null"),
      identity({ namespace: "mcp__s", name: "t" }, '{"a":1}'),
      identity("mcp__s__t", "{not json"),
      identity("mcp__s__t", "{not json either"),
    ];
    expect(new Set(identities).size).toBe(identities.length);
  });
});
