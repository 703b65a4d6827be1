/**
 * The catalog as its own process: `node services/catalog/dist/main.js [--config <path>]
 * [--servers <name,…>] [--connectors-only]`.
 */
import { runServiceProcess } from "@toolbus/bus";
import { catalogDefinition } from "./definition.js";

await runServiceProcess(catalogDefinition);
