/**
 * The protected resources a server is, by their canonical URIs (RFC 8707 §2, the MCP
 * authorization spec): an absolute URI, scheme and host lower-case, the default port left out,
 * no fragment, no trailing slash. The MCP endpoint (`/mcp`) is a resource of its own; everything
 * else a server serves (REST, the approvals routes) is the resource at its root. Its metadata
 * (RFC 9728) sits at `/.well-known/oauth-protected-resource` followed by the resource's path.
 */

export const METADATA_PATH = "/.well-known/oauth-protected-resource";

/** The paths that are resources of their own; every other path belongs to the root resource (""). */
export function resourcePathOf(urlPath: string, resourcePaths: readonly string[]): string {
  const path = urlPath.split("?")[0] ?? "";
  return resourcePaths.find((resource) => path === resource || path.startsWith(`${resource}/`)) ?? "";
}

/**
 * The origin the client addressed: `[gateway] public_url` when set (behind a proxy), else
 * `http://` and the request's Host. Undefined when the Host is not a plain host[:port].
 */
export function requestOrigin(
  publicUrl: string | undefined,
  hostHeader: string | undefined,
): string | undefined {
  if (publicUrl !== undefined) return new URL(publicUrl).origin;
  if (hostHeader === undefined) return undefined;
  const host = hostHeader.trim();
  if (!/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(host)) return undefined;
  const url = URL.parse(`http://${host}`);
  // The URL parser lower-cases the host and drops :80.
  return url === null ? undefined : url.origin;
}

/** The canonical URI of the resource at `resourcePath` ("" for the root): no trailing slash. */
export function canonicalResource(origin: string, resourcePath: string): string {
  return `${origin}${resourcePath}`;
}

/** Where the metadata of that resource is served (RFC 9728 §3.1: the well-known path, then the resource's). */
export function metadataUrl(origin: string, resourcePath: string): string {
  return `${origin}${METADATA_PATH}${resourcePath}`;
}
