import { afterAll, expect, it } from "vitest";
import { freePort, startEverythingHttp } from "../support/everything-http.js";
import { CatalogHarness, eventually, toolbusToml } from "../support/harness.js";

let h: CatalogHarness;
afterAll(() => h?.close());

it("http restart", async () => {
  h = await CatalogHarness.create("http");
  const port = await freePort();
  let srv = await startEverythingHttp(port);
  const svc = await h.start(toolbusToml({ servers: { ev: { url: srv.url } } }));
  console.log(JSON.stringify(await svc.service.startup));
  const snap = await h.catalog();
  console.log(snap.tools.map(t => t.rawName), snap.revision);
  await srv.stop();
  const t0 = Date.now();
  await eventually("failed", () => h.eventsOn(h.subjects.serverStatus("ev")).find(e => (e.status as any).state === "failed"), 20000);
  console.log("failed after", Date.now() - t0);
  srv = await startEverythingHttp(port);
  await eventually("ready again", () => h.eventsOn(h.subjects.serverStatus("ev")).filter(e => (e.status as any).state === "ready").length >= 2 ? true : undefined, 30000);
  console.log(JSON.stringify(h.eventsOn(h.subjects.serverStatus("ev")), null, 1));
  const rev = (await h.catalog()).tools.find(t => t.rawName === "echo")!.revision;
  console.log(JSON.stringify(await h.request(h.subjects.connectorCall("ev"), { callId: "c1", tool: "echo", arguments: { message: "hi" }, preparedRevision: rev })));
  await srv.stop();
  expect(1).toBe(1);
}, 60000);
