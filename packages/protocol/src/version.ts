/**
 * The toolbus release, in one place: every service's logs and NATS micro-service info, the
 * gateway's MCP serverInfo and OpenAPI document, the catalog's MCP clientInfo and `toolbus
 * --version` read it from here. Every workspace package.json carries the same version (a test
 * checks), and no other source spells it.
 */
export const TOOLBUS_VERSION = "0.1.0";
