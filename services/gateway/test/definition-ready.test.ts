/**
 * The gateway is ready, for start-up to name its MCP endpoint, once it serves the catalog: a
 * client that connects at that moment lists tools instead of "the catalog has not published its
 * bucket yet". (The service here is the seam: `ready()` is what `/readyz` reports.)
 */
import { createLogger } from "@toolbus/bus";
import { expect, it } from "vitest";
import { gatewayDefinition } from "../src/definition.js";
import type { GatewayService } from "../src/gateway-service.js";

it("waits for the gateway's first copy of the catalog before it says ready", async () => {
  let loaded = false;
  const service = { url: "http://127.0.0.1:1", ready: () => loaded } as unknown as GatewayService;
  const logger = createLogger({ service: "gateway-test", version: "test", level: "silent" });
  const order: string[] = [];
  const ready = gatewayDefinition.ready(service, logger).then((problem) => order.push(`ready ${problem}`));
  await new Promise((resolve) => setTimeout(resolve, 300));
  order.push("catalog loaded");
  loaded = true;
  await ready;
  expect(order).toEqual(["catalog loaded", "ready undefined"]);
});
