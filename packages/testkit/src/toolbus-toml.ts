/** toolbus.toml text for tests, written from plain objects (keys and strings quoted as JSON, which TOML reads alike). */

export type TomlValue = string | number | boolean | TomlValue[] | { [key: string]: TomlValue };

/** One `[mcp_servers.<name>]` table per server, after optional `[gateway]` and `[catalog]` tables. */
export function toolbusToml(tables: {
  servers: Record<string, Record<string, TomlValue>>;
  gateway?: Record<string, TomlValue>;
  catalog?: Record<string, TomlValue>;
}): string {
  const lines: string[] = [];
  if (tables.gateway) lines.push("[gateway]", ...keyValues(tables.gateway), "");
  if (tables.catalog) lines.push("[catalog]", ...keyValues(tables.catalog), "");
  for (const [name, fields] of Object.entries(tables.servers)) {
    lines.push(`[mcp_servers.${JSON.stringify(name)}]`, ...keyValues(fields), "");
  }
  return lines.join("\n");
}

function keyValues(fields: Record<string, TomlValue>): string[] {
  return Object.entries(fields).map(([key, value]) => `${JSON.stringify(key)} = ${tomlValue(value)}`);
}

function tomlValue(value: TomlValue): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  return `{ ${Object.entries(value)
    .map(([key, v]) => `${JSON.stringify(key)} = ${tomlValue(v)}`)
    .join(", ")} }`;
}
