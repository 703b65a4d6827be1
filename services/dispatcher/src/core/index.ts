/** The dispatcher's pure core: everything a call handler decides without I/O. */
export * from "./app-resource-uri.js";
export * from "./call-deduper.js";
export * from "./call-items.js";
export * from "./call-outcome.js";
export * from "./event-copy.js";
export * from "./event-fit.js";
export * from "./hook-payloads.js";
export * from "./json.js";
export * from "./messages.js";
export * from "./model-output.js";
export * from "./output-body.js";
export * from "./stale-check.js";
export * from "./tool-arguments.js";
export * from "./truncate.js";
export * from "./truncate-items.js";
export * from "./unsupported-media.js";
