import { describe, expect, it } from "vitest";
import { type UsageQuery, usageQuery } from "../../src/core/usage-query.js";
import { A, B } from "../citations.js";

describe("usageQuery", () => {
  const cases: Array<{ name: string; request: Parameters<typeof usageQuery>[0]; query: UsageQuery }> = [
    { name: "the 20 most used without ids or limit", request: {}, query: { kind: "top", limit: 20 } },
    { name: "the most used up to the limit", request: { limit: 1000 }, query: { kind: "top", limit: 1000 } },
    {
      name: "the named ids, de-duplicated, UUIDs in canonical form, others as given",
      request: { rolloutIds: [A.toUpperCase(), A, "legacy-id", B] },
      query: { kind: "ids", ids: [A, "legacy-id", B] },
    },
    {
      name: "the named ids with a limit",
      request: { rolloutIds: [A], limit: 5 },
      query: { kind: "ids", ids: [A], limit: 5 },
    },
    { name: "no rows for an empty id list", request: { rolloutIds: [] }, query: { kind: "ids", ids: [] } },
  ];

  it.each(cases)("asks for $name", ({ request, query }) => {
    expect(usageQuery(request)).toEqual(query);
  });
});
