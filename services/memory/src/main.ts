/** The memory service as its own process: `node services/memory/dist/main.js [--config <path>]`. */
import { runServiceProcess } from "@toolbus/bus";
import { memoryDefinition } from "./definition.js";

await runServiceProcess(memoryDefinition);
