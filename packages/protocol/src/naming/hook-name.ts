/**
 * The hook name (docs/reference-behavior.md §3.5): what hook matchers and audit logs see,
 * `mcp__<namespace>__<name>` whether or not the callable namespace carries the prefix.
 */
import { MCP_PREFIX, NAME_DELIMITER } from "./sanitize.js";

export function hookName(namespace: string, name: string): string {
  return hookNameOfFlat(namespace, name, `${namespace}${NAME_DELIMITER}${name}`);
}

/** `hookName(namespace, name)` given `flat = namespace + "__" + name`, which it usually is. */
export function hookNameOfFlat(namespace: string, name: string, flat: string): string {
  const joined =
    namespace.endsWith("_") || name.startsWith("_")
      ? `${namespace.replace(/_+$/, "")}${NAME_DELIMITER}${name.replace(/^_+/, "")}`
      : flat;
  return joined.startsWith(MCP_PREFIX) ? joined : `${MCP_PREFIX}${joined}`;
}
