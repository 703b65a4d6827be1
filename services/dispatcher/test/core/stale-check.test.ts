import { describe, expect, it } from "vitest";
import { checkStale } from "../../src/core/stale-check.js";

const route = { server: "docs", rawTool: "search.v2" };
const current = { fingerprint: "f-new", serverRevision: 7 };
const staleMessage = "tool call rejected because the catalog changed after `docs/search.v2` was prepared";

describe("checkStale", () => {
  it.each([
    { name: "a caller that names neither is served against the current catalog", prepared: {} },
    { name: "the current fingerprint passes", prepared: { toolFingerprint: "f-new" } },
    { name: "a revision equal to the server's passes", prepared: { catalogRevision: 7 } },
    { name: "a revision newer than the server's last change passes", prepared: { catalogRevision: 12 } },
    { name: "both matching pass", prepared: { toolFingerprint: "f-new", catalogRevision: 9 } },
  ])("$name", ({ prepared }) => {
    expect(checkStale(prepared, current, route)).toEqual({ kind: "ok" });
  });

  it.each([
    {
      name: "rejects a call prepared against another fingerprint",
      prepared: { toolFingerprint: "f-old" },
      reason: "fingerprint",
    },
    {
      name: "rejects a call prepared against an older revision",
      prepared: { catalogRevision: 6 },
      reason: "revision",
    },
    {
      name: "a changed fingerprint is stale even when the revision is current",
      prepared: { toolFingerprint: "f-old", catalogRevision: 7 },
      reason: "fingerprint",
    },
    {
      name: "an older revision is stale even when the fingerprint matches",
      prepared: { toolFingerprint: "f-new", catalogRevision: 3 },
      reason: "revision",
    },
  ])("[29] $name", ({ prepared, reason }) => {
    expect(checkStale(prepared, current, route)).toEqual({
      kind: "stale",
      reason,
      prepared,
      current,
      message: staleMessage,
    });
  });
});
