import { startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, expect, it } from "vitest";
import { CatalogHarness, toolbusToml } from "../support/harness.js";

let h: CatalogHarness;
afterAll(() => h?.close());
it("progress", async () => {
  h = await CatalogHarness.create("prog");
  const s = await startTestServer({ transport: "stdio", script: { tools: [{ name: "work", behavior: { kind: "progress", count: 3, intervalMs: 5 } }] } });
  const svc = await h.start(toolbusToml({ servers: { srv: { command: s.command, args: s.args } } }));
  await svc.service.startup;
  const all = h.collect(`${h.prefix}.calls.>`);
  await h.nc.flush();
  const rev = (await h.entry("srv"))!.revision;
  console.log(JSON.stringify(await h.request(h.subjects.connectorCall("srv"), { callId: "cp", tool: "work", preparedRevision: rev })));
  await new Promise(r => setTimeout(r, 500));
  console.log(JSON.stringify(all), JSON.stringify(svc.logs.filter(l => l.level >= 40)));
  expect(1).toBe(1);
});
