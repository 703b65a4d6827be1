import { describe, expect, it } from "vitest";
import { type Page, paginate } from "../../src/core/pagination.js";

const never = () => new Promise<void>(() => {});

function pages<T>(list: Array<Page<T>>) {
  const requested: Array<string | undefined> = [];
  const fetch = async (cursor: string | undefined) => {
    requested.push(cursor);
    const page = list[requested.length - 1];
    if (!page) throw new Error("no more pages scripted");
    return page;
  };
  return { fetch, requested };
}

describe("paginate", () => {
  it("[14] follows cursors, including an empty one, until none is returned", async () => {
    const { fetch, requested } = pages([
      { items: [1], nextCursor: "" },
      { items: [2], nextCursor: "b" },
      { items: [3] },
    ]);
    expect(await paginate(fetch, { method: "resources/list", sleep: never })).toEqual([1, 2, 3]);
    expect(requested).toEqual([undefined, "", "b"]);
  });

  it("[14] reads exactly one page under the legacy protocol even when nextCursor is set", async () => {
    const { fetch, requested } = pages([{ items: [1], nextCursor: "more" }]);
    expect(await paginate(fetch, { method: "tools/list", firstPageOnly: true, sleep: never })).toEqual([1]);
    expect(requested).toEqual([undefined]);
  });

  it.each([
    {
      rule: "a repeated cursor",
      list: [
        { items: [1], nextCursor: "a" },
        { items: [2], nextCursor: "a" },
      ],
      limits: {},
      message: "tools/list returned a repeated pagination cursor",
    },
    {
      rule: "more than the page limit",
      list: Array.from({ length: 101 }, (_, i) => ({ items: [i], nextCursor: `c${i}` })),
      limits: {},
      message: "tools/list exceeded the pagination limit of 100 pages",
    },
    {
      rule: "more than the item limit",
      list: [{ items: Array.from({ length: 2049 }, (_, i) => i) }],
      limits: {},
      message: "tools/list exceeded the catalog limit of 2048 items",
    },
    {
      rule: "an oversize cursor",
      list: [{ items: [1], nextCursor: "x".repeat(65_537) }],
      limits: {},
      message: "tools/list returned a pagination cursor exceeding 65536 bytes",
    },
  ])("[13] fails on $rule with the reference's message", async ({ list, limits, message }) => {
    const { fetch } = pages<number>(list);
    await expect(paginate(fetch, { method: "tools/list", limits, sleep: never })).rejects.toThrow(message);
  });

  it("[13] fails when all pages together take longer than the timeout", async () => {
    const fetch = () => new Promise<Page<number>>(() => {});
    await expect(
      paginate(fetch, { method: "tools/list", limits: { timeoutMs: 30_000 }, sleep: async () => {} }),
    ).rejects.toThrow("tools/list pagination timed out after 30s");
  });
});
