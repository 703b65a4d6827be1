/** The dispatcher as its own process: `node services/dispatcher/dist/main.js [--config <path>]`. */
import { runServiceProcess } from "@toolbus/bus";
import { dispatcherDefinition } from "./definition.js";

await runServiceProcess(dispatcherDefinition);
