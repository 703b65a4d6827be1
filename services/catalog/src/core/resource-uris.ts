/** Resource URIs a call result points at: `resource_link` blocks and embedded resources. */
export function resourceUris(result: Record<string, unknown>): string[] {
  const content = Array.isArray(result.content) ? result.content : [];
  const uris: string[] = [];
  for (const block of content as Array<Record<string, unknown>>) {
    if (block?.type === "resource_link" && typeof block.uri === "string") uris.push(block.uri);
    const embedded =
      block?.type === "resource" ? (block.resource as { uri?: unknown } | undefined) : undefined;
    if (typeof embedded?.uri === "string") uris.push(embedded.uri);
  }
  return uris;
}
