/**
 * The approvals service as its own process: `node services/approvals/dist/main.js
 * [--config <path>] [--host <host>] [--port <port>]`.
 */
import { runServiceProcess } from "@toolbus/bus";
import { approvalsDefinition } from "./definition.js";

await runServiceProcess(approvalsDefinition);
