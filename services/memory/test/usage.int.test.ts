// toolbus.memory.usage through the bus: §9's phase-2 ranking, lookups by id, bad requests.
import { MemoryUsageResultSchema, WireError } from "@toolbus/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { type Harness, seedRollouts, startHarness } from "./support.js";

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

describe("toolbus.memory.usage", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ scope: "file" });
    // Each pair of neighbours in the expected ranking is decided by a different tie-breaker.
    await seedRollouts(h.db, [
      { threadId: id(1), sourceUpdatedAt: 50, usageCount: 5, lastUsage: 100 },
      { threadId: id(2), sourceUpdatedAt: 10, usageCount: 5, lastUsage: 200 },
      { threadId: id(3), sourceUpdatedAt: 300, usageCount: null, lastUsage: null },
      { threadId: id(4), sourceUpdatedAt: 150, usageCount: 2, lastUsage: null },
      { threadId: id(5), sourceUpdatedAt: 100, usageCount: 2, lastUsage: 150 },
      { threadId: id(6), sourceUpdatedAt: 300, usageCount: 0, lastUsage: 50 },
      { threadId: id(7), sourceUpdatedAt: 10, usageCount: 1, lastUsage: 10 },
      { threadId: id(8), sourceUpdatedAt: 10, usageCount: 1, lastUsage: 10 },
    ]);
  });

  const row = (n: number, usageCount: number, lastUsage: number | null) => ({
    rolloutId: id(n),
    usageCount,
    lastUsage,
  });

  it("lists the most used rollouts in phase-2 order: count, last use or update, update, id", async () => {
    expect(await h.request(h.service.subjects.memoryUsage, {}, MemoryUsageResultSchema)).toEqual({
      usage: [
        row(2, 5, 200),
        row(1, 5, 100),
        row(4, 2, null),
        row(5, 2, 150),
        row(8, 1, 10),
        row(7, 1, 10),
        row(3, 0, null),
        row(6, 0, 50),
      ],
    });
  });

  it("stops at the limit", async () => {
    expect(await h.request(h.service.subjects.memoryUsage, { limit: 3 }, MemoryUsageResultSchema)).toEqual({
      usage: [row(2, 5, 200), row(1, 5, 100), row(4, 2, null)],
    });
  });

  it("gives the rows of the named rollouts, in any UUID spelling, and leaves out unknown ones", async () => {
    const request = { rolloutIds: [id(6), id(1).toUpperCase(), id(99), "not-a-uuid"] };
    expect(await h.request(h.service.subjects.memoryUsage, request, MemoryUsageResultSchema)).toEqual({
      usage: [row(1, 5, 100), row(6, 0, 50)],
    });
  });

  it.each([
    { request: { limit: 0 }, message: "limit: Too small: expected number to be >=1" },
    { request: { limit: 1001 }, message: "limit: Too big: expected number to be <=1000" },
    { request: { rolloutIds: "a" }, message: "rolloutIds: Invalid input: expected array, received string" },
  ])("answers bad_request for $request", async ({ request, message }) => {
    const failure = await h.request(h.service.subjects.memoryUsage, request, MemoryUsageResultSchema).then(
      () => "answered",
      (err: unknown) => (err instanceof WireError ? { code: err.code, message: err.message } : err),
    );
    expect(failure).toEqual({ code: "bad_request", message });
  });
});
