import { describe, expect, it } from "vitest";
import { nextServerEntry, type ServerEntry, shouldReportStatus } from "../../src/core/catalog-entry.js";

const base = {
  server: "docs",
  required: false,
  origin: "stdio",
  resourcesSupported: false,
};
const tool = (name: string, inputSchema: Record<string, unknown> = { type: "object" }) => ({
  name,
  inputSchema,
});
const stored = (over: Partial<ServerEntry>): ServerEntry => ({
  ...base,
  status: "ready",
  tools: [tool("a")],
  revision: 5,
  listedAt: "2026-01-01T00:00:00.000Z",
  ...over,
});
const NOW = "2026-02-02T00:00:00.000Z";

describe("the next catalog entry of a server", () => {
  it("keeps what the server declared at start-up (resources, prompts, completions, instructions) through a re-list", () => {
    const before = stored({
      resourcesSupported: true,
      promptsSupported: true,
      completionsSupported: true,
      instructions: "Use me.",
    });
    const next = nextServerEntry(before, base, { tools: [tool("a"), tool("b")] }, 9, NOW);
    expect(next).toEqual({ ...before, tools: [tool("a"), tool("b")], revision: 9 });
  });

  it("keeps the server's serverInfo through a re-list, and replaces or clears what a new start-up says", () => {
    const serverInfo = {
      name: "docs-server",
      title: "Docs",
      version: "1.2.0",
      websiteUrl: "https://docs.example",
    };
    const before = stored({ instructions: "Use me.", serverInfo });
    expect(nextServerEntry(before, base, { tools: [tool("b")] }, 9, NOW)).toEqual({
      ...before,
      tools: [tool("b")],
      revision: 9,
    });
    const restarted = nextServerEntry(
      before,
      base,
      { status: "ready", instructions: undefined, serverInfo: { name: "docs-server", version: "1.3.0" } },
      9,
      NOW,
    );
    expect(restarted).toEqual({
      ...base,
      status: "ready",
      tools: [tool("a")],
      revision: 5,
      listedAt: before.listedAt,
      serverInfo: { name: "docs-server", version: "1.3.0" },
    });
    expect(restarted).not.toHaveProperty("instructions");
  });

  it("gives a new server's entry the revision it is written at", () => {
    expect(nextServerEntry(undefined, base, { status: "starting" }, 3, NOW)).toEqual({
      ...base,
      status: "starting",
      tools: [],
      revision: 3,
      listedAt: NOW,
    });
  });

  it.each([
    {
      name: "a changed tool list moves the server's revision",
      change: { tools: [tool("a"), tool("b")] },
      expected: { tools: [tool("a"), tool("b")], revision: 9 },
    },
    {
      name: "a status change keeps the revision",
      change: { status: "failed" as const, statusError: "gone" },
      expected: { status: "failed" as const, statusError: "gone" },
    },
    {
      name: "leaving failed drops the error",
      current: { status: "failed" as const, statusError: "gone" },
      change: { status: "ready" as const },
      expected: { status: "ready" as const },
    },
  ])("$name", ({ current, change, expected }) => {
    const before = stored(current ?? {});
    const next = nextServerEntry(before, base, change, 9, NOW);
    const { statusError: _dropped, ...rest } = before;
    expect(next).toEqual({ ...rest, ...expected });
  });

  it.each([
    { name: "the same tools", change: { status: "ready" as const, tools: [tool("a")] } },
    {
      name: "the same tools with their keys in another order",
      change: { tools: [{ inputSchema: { type: "object" }, name: "a" }] },
    },
    { name: "no change at all", change: {} },
  ])("writes nothing for $name", ({ change }) => {
    expect(nextServerEntry(stored({}), base, change, 9, NOW)).toBeUndefined();
  });
});

describe("statuses a replica may report over the stored entry", () => {
  it.each([
    { stored: "ready", status: "starting", report: false },
    { stored: "ready", status: "cancelled", report: false },
    { stored: "ready", status: "failed", report: true },
    { stored: "ready", status: "ready", report: true },
    { stored: "failed", status: "starting", report: true },
    { stored: "starting", status: "cancelled", report: true },
    { stored: undefined, status: "starting", report: true },
  ] as const)("$status over $stored: $report", ({ stored: current, status, report }) => {
    expect(shouldReportStatus(current ? stored({ status: current }) : undefined, status)).toBe(report);
  });
});
