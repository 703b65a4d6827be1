/**
 * The hook name (codex-mcp-behavior.md §3.5): what hook matchers and audit logs see,
 * `mcp__<namespace>__<name>` whether or not the callable namespace carries the prefix.
 */
import { MCP_PREFIX, NAME_DELIMITER } from "./sanitize.js";

export function hookName(namespace: string, name: string): string {
  const trimmedNamespace = namespace.endsWith("_") ? namespace.replace(/_+$/, "") : namespace;
  const trimmedName = name.startsWith("_") ? name.replace(/^_+/, "") : name;
  const joined = `${trimmedNamespace}${NAME_DELIMITER}${trimmedName}`;
  return joined.startsWith(MCP_PREFIX) ? joined : `${MCP_PREFIX}${joined}`;
}
