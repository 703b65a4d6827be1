import { startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, expect, it } from "vitest";
import { CatalogHarness, toolbusToml } from "../support/harness.js";

let h: CatalogHarness;
afterAll(() => h?.close());
it("timing", async () => {
  h = await CatalogHarness.create("timing");
  const servers: Record<string, any> = {};
  for (const [name, script] of Object.entries({ paged: { toolCount: 250, toolsPageSize: 100 }, loop: { tools: [{ name: "echo" }], cursorLoop: true }, pages: { toolCount: 1010, toolsPageSize: 10 }, items: { toolCount: 3000, toolsPageSize: 100 }, tenk: { toolCount: 10000 } })) {
    const s = await startTestServer({ transport: "stdio", script: script as any });
    servers[name] = { command: s.command, args: s.args };
  }
  const t0 = Date.now();
  const svc = await h.start(toolbusToml({ servers }));
  const events: string[] = [];
  await svc.service.startup;
  console.log("startup", Date.now() - t0);
  for (const e of h.events) console.log(e.subject, JSON.stringify(e.body).slice(0, 100));
  const t1 = Date.now();
  await svc.stop();
  console.log("stop", Date.now() - t1);
  expect(1).toBe(1);
}, 120000);
