import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { connectBus, createLogger } from "@toolbus/bus";
import { createSubjects } from "@toolbus/protocol";
import { startGateway } from "./src/gateway-service.js";
const logger = createLogger({ service: "gateway", version: "t", level: "info" });
const bus = await connectBus({ natsUrl: "nats://127.0.0.1:4222", service: { name: "gateway", version: "0.1.0" }, logger });
const gw = await startGateway({ bus, subjects: createSubjects("t_gwscratch"), logger, gateway: { port: 0, host: "127.0.0.1", naming: "conditional", allowedHosts: ["localhost", "127.0.0.1"] } });
const client = new Client({ name: "t", version: "1" }, { capabilities: { elicitation: {} } });
await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`)));
console.log(JSON.stringify(await client.listTools()));
console.log(JSON.stringify(await client.callTool({ name: "echo", arguments: { a: 1 } })));
console.log(JSON.stringify(await client.callTool({ name: "img", arguments: {} })).slice(0, 300));
try { await client.callTool({ name: "nope", arguments: {} }); } catch (e) { console.log("ERR", (e as Error).message); }
console.log(JSON.stringify(await client.listResources().catch((e) => String(e))));
await client.close();
await gw.stop();
await bus.close();
