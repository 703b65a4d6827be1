/** Every message schema on the bus, and its inferred type. */
export * from "./approvals.js";
export * from "./call-events.js";
export * from "./catalog.js";
export * from "./connector.js";
export * from "./dispatch.js";
export * from "./mcp.js";
export * from "./memory.js";
export * from "./primitives.js";
export * from "./resource-origin.js";
export * from "./status-events.js";
