/**
 * Arguments of the resource tools (`list_mcp_resources`, `list_mcp_resource_templates`,
 * `read_mcp_resource`) as the reference reads them (codex-mcp-behavior.md §8).
 */

export type ListResourcesArgs = { server?: string; cursor?: string };
export type ReadResourceArgs = { server: string; uri: string };
export type ArgsResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** Blank or `null` means the defaults. Strings are trimmed; an empty one counts as absent. */
export function parseListResourcesArgs(text: string): ArgsResult<ListResourcesArgs> {
  const parsed = parseObject(text, { blankIsError: false });
  if (!parsed.ok) return parsed;
  const server = optionalString(parsed.value, "server");
  const cursor = optionalString(parsed.value, "cursor");
  if (cursor !== undefined && server === undefined) {
    return { ok: false, message: "cursor can only be used when a server is specified" };
  }
  return { ok: true, value: { ...(server ? { server } : {}), ...(cursor ? { cursor } : {}) } };
}

export function parseReadResourceArgs(text: string): ArgsResult<ReadResourceArgs> {
  const parsed = parseObject(text, { blankIsError: true });
  if (!parsed.ok) return parsed;
  for (const field of ["server", "uri"] as const) {
    if (optionalString(parsed.value, field) === undefined)
      return { ok: false, message: `${field} must be provided` };
  }
  return {
    ok: true,
    value: { server: optionalString(parsed.value, "server")!, uri: optionalString(parsed.value, "uri")! },
  };
}

function parseObject(text: string, options: { blankIsError: boolean }): ArgsResult<Record<string, unknown>> {
  const expectedValue = { ok: false as const, message: "failed to parse function arguments: expected value" };
  if (text.trim() === "") return options.blankIsError ? expectedValue : { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `failed to parse function arguments: ${(error as Error).message}` };
  }
  if (value === null) return options.blankIsError ? expectedValue : { ok: true, value: {} };
  if (typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, message: "failed to parse function arguments: expected an object" };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

function optionalString(object: Record<string, unknown>, field: string): string | undefined {
  const value = object[field];
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}
