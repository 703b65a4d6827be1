/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const match = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization);
  return match ? match[1] : undefined;
}
