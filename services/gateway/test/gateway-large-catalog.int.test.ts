/**
 * A catalog too big for one NATS message: the gateway follows the catalog bucket entry by entry,
 * so one server with 3,000 tools (whose normalized view is larger than max_payload) still loads,
 * lists every tool, and follows a change. The entry is written to the bucket as the catalog
 * writes it (the catalog itself refuses more than 2,048 tools per server, as Codex does).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Kvm } from "@nats-io/kv";
import {
  buildCatalogSnapshot,
  type CatalogServerEntry,
  catalogKey,
  RESOURCE_TOOL_NAMES,
} from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, mcpClient, Stack } from "./support/stack.js";

const NAMING = { nameLimit: 64, prefixMcp: true };

function bigServer(toolCount: number, revision: number): CatalogServerEntry {
  return {
    server: "big",
    status: "ready",
    required: false,
    revision,
    origin: "stdio",
    resourcesSupported: false,
    listedAt: "2026-01-01T00:00:00.000Z",
    tools: Array.from({ length: toolCount }, (_, i) => ({
      name: `tool_${i}`,
      description: `Tool number ${i} of the big server: it does one small thing and answers in text.`,
      inputSchema: { type: "object", properties: { query: { type: "string" } } },
    })),
  };
}

let stack: Stack;
const clients: Client[] = [];

beforeAll(async () => {
  // No catalog process: the test writes the bucket the catalog would.
  stack = await Stack.start("gw_big", "", []);
  const kv = await new Kvm(stack.nc).create(stack.subjects.kv.catalog, { history: 1 });
  await kv.put("naming", JSON.stringify(NAMING));
  await kv.put(catalogKey("big"), JSON.stringify(bigServer(3_000, 2)));
}, 60_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => undefined);
  await stack?.close();
});

describe("a catalog larger than one NATS message", () => {
  it("is whole larger than max_payload, though each entry fits", () => {
    const whole = buildCatalogSnapshot([bigServer(3_000, 2)], {
      naming: NAMING,
      revision: 2,
      exposure: "model",
    });
    const maxPayload = stack.nc.info?.max_payload ?? 0;
    expect({
      snapshotOverMax: Buffer.byteLength(JSON.stringify(whole)) > maxPayload,
      entryFits: Buffer.byteLength(JSON.stringify(bigServer(3_000, 2))) < maxPayload,
    }).toEqual({ snapshotOverMax: true, entryFits: true });
  });

  it("loads, lists every tool over MCP, and follows a change to it", async () => {
    const gateway = await stack.gateway();
    expect(gateway.ready()).toBe(true);
    const client = await mcpClient(gateway);
    clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [...RESOURCE_TOOL_NAMES, ...Array.from({ length: 3_000 }, (_, i) => `big__tool_${i}`)].sort(),
    );

    const kv = await new Kvm(stack.nc).open(stack.subjects.kv.catalog);
    await kv.put(catalogKey("big"), JSON.stringify(bigServer(3_001, 4)));
    const listed = await eventually("the gateway to list the added tool", async () => {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      return names.includes("big__tool_3000") ? names : undefined;
    });
    expect(listed).toContain("big__tool_3000");
  });
});
