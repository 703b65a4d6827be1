/**
 * Both readers of the catalog bucket, the dispatcher and the gateway, follow it with the one
 * follower of @toolbus/bus, so a value that fails its schema is treated alike by both (the rule
 * itself: packages/protocol/test/catalog-copy.test.ts): the server keeps its last good entry,
 * its tools stay listed and its calls keep running.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CatalogServerEntry } from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Services, startServices } from "./support/services.js";

/** A well-formed entry of a server no connector runs: written after the malformed one, it shows when both readers got that far. */
const MARKER: CatalogServerEntry = {
  server: "marker",
  status: "ready",
  required: false,
  revision: 1,
  origin: "stdio",
  tools: [{ name: "ping", inputSchema: { type: "object" } }],
  resourcesSupported: false,
  listedAt: "2026-01-01T00:00:00.000Z",
};

/** What a catalog of another version, or a connector with a bug, might write under a server's key. */
const MALFORMED: Array<[string, string]> = [
  [
    "an entry with a status no reader knows",
    JSON.stringify({ ...MARKER, server: "scripted", status: "asleep" }),
  ],
  ["text that is not JSON", "{not json"],
];

describe("a malformed catalog entry", () => {
  let s: Services;
  let mcp: Client;
  /** The echo tool as the gateway names it, while its entry is good. */
  let echo: string;
  const listed = async () => (await mcp.listTools()).tools.map((tool) => tool.name);

  beforeAll(async () => {
    s = await startServices({ label: "malformed_entry", script: { tools: [{ name: "echo" }] } });
    mcp = await s.mcpClient();
    echo = (await listed()).find((name) => name.endsWith("scripted__echo")) ?? "no echo tool listed";
  });

  afterAll(async () => {
    await s?.stop();
  });

  it.each(MALFORMED)(
    "(%s) leaves the server's last good entry to the dispatcher and the gateway",
    async (_, value) => {
      const kv = await s.client.kv(s.subjects.kv.catalog);
      await kv.put("server.scripted", value);
      // A watch delivers in order: once both readers hold what was written after it, they read it.
      const marker = await kv.put(
        "server.marker",
        JSON.stringify({ ...MARKER, listedAt: new Date().toISOString() }),
      );
      await expect.poll(() => s.dispatcher.catalog.revision).toBeGreaterThanOrEqual(marker);
      const markerListed = async () => (await listed()).some((name) => name.endsWith("marker__ping"));
      await expect.poll(markerListed).toBe(true);
      await kv.delete("server.marker");
      await expect.poll(markerListed).toBe(false);

      // The gateway still lists the tool, and a call to it runs, through the gateway and through the dispatcher.
      const outcome = {
        listed: (await listed()).includes(echo),
        gateway: await mcp
          .callTool({ name: echo, arguments: { text: "through the gateway" } })
          .then((result) => (result.isError ? "tool error" : "answered"))
          .catch((error: unknown) => `refused: ${String(error)}`),
        dispatcher: (
          await s.dispatch({
            tool: "mcp__scripted__echo",
            arguments: JSON.stringify({ text: "through the dispatcher" }),
          })
        ).status,
      };
      expect(outcome).toEqual({ listed: true, gateway: "answered", dispatcher: "completed" });
    },
  );
});
