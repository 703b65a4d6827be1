/**
 * A malicious MCP server can do no more than lie about itself: toolbus (`pnpm start` on a bus
 * that enforces the generated accounts) runs a stdio server that holds its own connector's NATS
 * seed — as if it had stolen it from the catalog process that runs it — and tries, through a
 * call of its tool, everything that identity must not do. Each attempt is refused; writing its
 * own catalog entry (a lie about itself) is what it may.
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { readSeedFile } from "@toolbus/bus";
import { identityOf } from "@toolbus/protocol";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type EnforcedToolbus,
  startEnforcedToolbus,
  stdioServerLines,
} from "../e2e/support/enforced-toolbus.js";
import { ROOT } from "../e2e/support/pnpm-start.js";

const TSX = pathToFileURL(createRequire(join(ROOT, "package.json")).resolve("tsx")).href;
const HOSTILE = join(ROOT, "test/security/support/hostile-connector-server.ts");

/** A REST call through the gateway, as any caller makes one. */
async function call(url: string, callId: string, tool: string, args: object) {
  const response = await fetch(`${url}/v1/calls`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ callId, tool, arguments: JSON.stringify(args) }),
  });
  return (await response.json()) as { status: string; result?: { content: Array<{ text: string }> } };
}

describe("a malicious MCP server holding its own connector's seed", () => {
  let victim: StdioTestServer;
  let running: EnforcedToolbus;

  beforeAll(async () => {
    victim = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }] } });
    const approve = 'default_tools_approval_mode = "approve"';
    running = await startEnforcedToolbus({
      label: "hostile_connector",
      servers: ["evil", "victim"],
      tables: ({ identities, natsUrl }) => {
        // The theft the test starts from: its connector's seed, in its environment.
        const stolen = readSeedFile(identities.seedFile(identityOf("connector", "evil")));
        const env = {
          NATS_URL: natsUrl,
          STOLEN_SEED: stolen,
          SELF: "evil",
          VICTIM: "victim",
          PREFIX: "toolbus",
        };
        const envTable = Object.entries(env).map(([name, value]) => `${name} = ${JSON.stringify(value)}`);
        return {
          evil: stdioServerLines(
            process.execPath,
            ["--import", TSX, HOSTILE],
            [approve, `env = { ${envTable.join(", ")} }`],
          ),
          victim: stdioServerLines(victim.command, victim.args, [approve]),
        };
      },
    });
  }, 180_000);

  afterAll(async () => {
    await running?.stop();
    await victim?.dispose();
  });

  it("is refused everything of another server and of approvals, and may lie only about itself", async () => {
    const reply = await call(running.url, "hostile-1", "mcp__evil__attack", {});
    expect(reply.status, JSON.stringify(reply)).toBe("completed");
    const report = JSON.parse(reply.result?.content[0]?.text ?? "{}") as Record<string, string>;
    const { "lie about itself (write its own catalog entry)": lie, ...forbidden } = report;
    expect(Object.keys(forbidden).length).toBeGreaterThan(10);
    expect(Object.entries(forbidden).filter(([, outcome]) => outcome !== "refused")).toEqual([]);
    expect(lie).toBe("allowed");
    // The victim's tool still runs as it is, through the dispatcher.
    expect((await call(running.url, "victim-1", "mcp__victim__echo", { text: "still mine" })).status).toBe(
      "completed",
    );
  });
});
