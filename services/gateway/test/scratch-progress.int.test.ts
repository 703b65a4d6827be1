import { startTestServer } from "@toolbus/testkit/mcp-test-server";
import { it } from "vitest";
import { mcpClient, Stack, tomlFor } from "./support/stack.js";
it("debug progress", async () => {
  const alpha = await startTestServer({ transport: "stdio", script: { tools: [{ name: "count", behavior: { kind: "progress", count: 3, intervalMs: 20 } }] } });
  const stack = await Stack.start("gw_dbg", tomlFor([{ name: "alpha", command: alpha.command, args: alpha.args }]));
  try {
    const t0 = Date.now();
    const seen: string[] = [];
    stack.nc.subscribe(`${stack.prefix}.calls.*.progress`, { callback: (_e, m) => seen.push(`${Date.now() - t0} ${m.string()}`) });
    stack.nc.subscribe(`_INBOX.>`, { callback: (_e, m) => seen.push(`${Date.now() - t0} inbox ${m.string().slice(0, 80)}`) });
    const gw = await stack.gateway();
    const c = await mcpClient(gw);
    for (let i = 0; i < 3; i++) {
      const ups: number[] = [];
      await c.callTool({ name: "alpha__count", arguments: {} }, undefined, { onprogress: (p) => ups.push(p.progress) });
      console.log("updates", ups);
    }
    console.log(seen.join("\n"));
    await c.close();
  } finally { await stack.close(); await alpha.dispose(); }
}, 60000);
