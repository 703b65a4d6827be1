/**
 * The gateway as its own process: `node services/gateway/dist/main.js [--config <path>]
 * [--host <host>] [--port <port>]`.
 */
import { runServiceProcess } from "@toolbus/bus";
import { gatewayDefinition } from "./definition.js";

await runServiceProcess(gatewayDefinition);
