import { describe, expect, it } from "vitest";
import { StaleSubjects } from "../../src/core/stale-subjects.js";

const limits = { failures: 3, overMs: 1_000, renewEveryMs: 10_000, tracked: 2 };

describe("a subject the server keeps refusing", () => {
  it("renews the connection once it failed often enough over long enough, while other writes succeed", () => {
    const stale = new StaleSubjects(limits);
    expect([stale.failed("a", 0), stale.failed("a", 500)]).toEqual([false, false]);
    stale.succeeded("other", 600);
    expect(stale.failed("a", 900)).toBe(false);
    expect(stale.failed("a", 1_000)).toBe(true);
  });

  it("is not renewed while every write fails (JetStream down or electing: a new connection cures nothing)", () => {
    const stale = new StaleSubjects(limits);
    stale.succeeded("other", 0);
    for (let t = 100; t < 20_000; t += 250) {
      expect(stale.failed("a", t)).toBe(false);
      expect(stale.failed("b", t)).toBe(false);
    }
    // The cluster is back: other keys are written, "a" still is not.
    stale.succeeded("c", 20_000);
    expect(stale.failed("a", 20_100)).toBe(true);
  });

  it("does not count failures a success came between", () => {
    const stale = new StaleSubjects(limits);
    stale.failed("a", 0);
    stale.failed("a", 100);
    stale.succeeded("a", 200);
    stale.succeeded("other", 300);
    expect([stale.failed("a", 1_000), stale.failed("a", 1_500), stale.failed("a", 1_900)]).toEqual([
      false,
      false,
      false,
    ]);
  });

  it("is not renewed for many quick failures, nor more often than allowed", () => {
    const stale = new StaleSubjects(limits);
    stale.succeeded("other", 50);
    for (let t = 0; t < 900; t += 100) expect(stale.failed("a", t)).toBe(false);
    expect(stale.failed("a", 1_000)).toBe(true);
    stale.succeeded("other", 1_150);
    for (let t = 1_100; t < 11_000; t += 500) expect(stale.failed("b", t)).toBe(false);
    expect(stale.failed("b", 11_000)).toBe(true);
  });

  it("tracks a bounded number of subjects, forgetting the oldest", () => {
    const stale = new StaleSubjects(limits);
    stale.succeeded("other", 0);
    stale.failed("a", 10);
    stale.failed("a", 20);
    stale.failed("b", 30);
    stale.failed("c", 40); // "a" forgotten: its count starts again
    stale.succeeded("other", 1_000);
    expect([stale.failed("a", 2_000), stale.failed("a", 2_100)]).toEqual([false, false]);
  });

  it("is not renewed again for a subject that goes on failing after the renewal it caused", () => {
    const stale = new StaleSubjects(limits);
    for (const t of [100, 600, 1_000]) stale.failed("a", t);
    stale.succeeded("other", 1_050);
    expect(stale.failed("a", 1_100)).toBe(true);
    // A new connection did not cure "a", while other writes go through: the same key failing the
    // same way renews nothing more.
    for (let t = 12_000; t < 60_000; t += 500) {
      stale.succeeded("other", t - 1);
      expect(stale.failed("a", t)).toBe(false);
    }
    // Another subject going stale still renews.
    for (const t of [60_000, 60_500, 61_000]) stale.failed("b", t);
    stale.succeeded("other", 61_050);
    expect(stale.failed("b", 61_100)).toBe(true);
  });

  it("renews for a subject again once it was answered between", () => {
    const stale = new StaleSubjects(limits);
    for (const t of [100, 600, 1_000]) stale.failed("a", t);
    stale.succeeded("other", 1_050);
    expect(stale.failed("a", 1_100)).toBe(true);
    stale.succeeded("a", 2_000);
    for (const t of [20_000, 20_500, 21_000]) stale.failed("a", t);
    stale.succeeded("other", 21_050);
    expect(stale.failed("a", 21_100)).toBe(true);
  });
});
