import { startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, expect, it } from "vitest";
import { CatalogHarness, toolbusToml } from "../support/harness.js";

let h: CatalogHarness;
afterAll(() => h?.close());

it("smoke", async () => {
  h = await CatalogHarness.create("smoke");
  const loop = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }], cursorLoop: true } });
  const many = await startTestServer({ transport: "stdio", script: { toolCount: 3000, toolsPageSize: 100 } });
  const tenk = await startTestServer({ transport: "stdio", script: { toolCount: 10000 } });
  const main = await startTestServer({ transport: "stdio", script: { tools: [{ name: "echo" }, { name: "crash", behavior: { kind: "crash" } }, { name: "huge", behavior: { kind: "huge", bytes: 50_000_000 } }] } });
  const t0 = Date.now();
  const svc = await h.start(toolbusToml({ servers: {
    main: { command: main.command, args: main.args },
  } }));
  console.log(JSON.stringify(await svc.service.startup, null, 1), Date.now() - t0);
  console.log(JSON.stringify((await h.catalog()).servers, null, 1));
  const rev = (await h.catalog()).tools.find(t => t.server === "main")!.revision;
  let t1 = Date.now();
  const huge = await h.request(h.subjects.connectorCall("main"), { callId: "c1", tool: "huge", preparedRevision: rev }, 60000);
  console.log("huge", JSON.stringify(huge).slice(0, 500), Date.now() - t1, process.memoryUsage().rss / 1e6);
  const crash = await h.request(h.subjects.connectorCall("main"), { callId: "c2", tool: "crash", preparedRevision: rev }, 60000);
  console.log("crash", JSON.stringify(crash));
  await new Promise(r => setTimeout(r, 3000));
  const echo = await h.request(h.subjects.connectorCall("main"), { callId: "c3", tool: "echo", preparedRevision: rev }, 60000);
  console.log("echo", JSON.stringify(echo));
  console.log(JSON.stringify(h.events.filter(e => e.subject.includes("server.main")), null, 1));
  for (const s of [loop, many, tenk, main]) await s.dispose();
  expect(1).toBe(1);
}, 120000);
