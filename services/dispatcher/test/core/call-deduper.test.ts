import { describe, expect, it } from "vitest";
import { createCallDeduper } from "../../src/core/call-deduper.js";

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
    const a = dedupe.run("c1", () => first.promise);
    const b = dedupe.run("c1", second.fn);
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
    await dedupe.run("c1", fn);
    time.advance(999);
    await dedupe.run("c1", fn);
    const withinTtl = calls.count;
    time.advance(1);
    await dedupe.run("c1", fn);
    expect({ withinTtl, afterTtl: calls.count }).toEqual({ withinTtl: 1, afterTtl: 2 });
  });

  it("shares a failure too, and turns a synchronous throw into a rejection", async () => {
    const time = clock();
    const dedupe = createCallDeduper({ ttlMs: 1_000, maxEntries: 10, now: time.now });
    const boom = new Error("boom");
    const first = dedupe.run("c1", () => {
      throw boom;
    });
    const repeat = dedupe.run("c1", async () => "never");
    await expect(first).rejects.toBe(boom);
    await expect(repeat).rejects.toBe(boom);
  });

  it("keeps distinct call ids apart", async () => {
    const dedupe = createCallDeduper({ ttlMs: 1_000, maxEntries: 10, now: clock().now });
    expect(await Promise.all([dedupe.run("a", async () => 1), dedupe.run("b", async () => 2)])).toEqual([
      1, 2,
    ]);
  });

  it("holds at most maxEntries, forgetting finished calls oldest first before in-flight ones", async () => {
    const time = clock();
    const dedupe = createCallDeduper({ ttlMs: 60_000, maxEntries: 2, now: time.now });
    const inFlight = deferred<string>();
    const pending = dedupe.run("slow", () => inFlight.promise);
    await dedupe.run("done-1", async () => "1");
    await dedupe.run("done-2", async () => "2");
    const sizeAfterThree = dedupe.size;
    const { calls, fn } = counted("again");
    const slowRepeat = dedupe.run("slow", fn);
    const done2Repeat = await dedupe.run("done-2", fn);
    const done1Repeat = await dedupe.run("done-1", fn);
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
    dedupe.run("a", () => first.promise);
    dedupe.run("b", () => new Promise<string>(() => {}));
    const { calls, fn } = counted("rerun");
    const again = await dedupe.run("a", fn);
    first.resolve("a");
    expect({ again, reruns: calls.count, size: dedupe.size }).toEqual({ again: "rerun", reruns: 1, size: 1 });
  });
});
