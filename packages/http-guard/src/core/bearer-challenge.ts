/**
 * The `WWW-Authenticate: Bearer …` challenge of a refusal (RFC 6750 §3, RFC 9728 §5.1): where
 * the resource's metadata is, which scopes would do, and, when a token was sent and refused,
 * why (`invalid_token`), or that it lacks a scope (`insufficient_scope`). A request that sent no
 * token gets no error code (RFC 6750 §3.1).
 */

export interface Challenge {
  realm?: string;
  resourceMetadata?: string;
  scopes?: readonly string[];
  error?: "invalid_token" | "insufficient_scope";
  errorDescription?: string;
}

export function bearerChallenge(challenge: Challenge): string {
  const params: Array<[string, string]> = [];
  if (challenge.realm !== undefined) params.push(["realm", challenge.realm]);
  if (challenge.resourceMetadata !== undefined)
    params.push(["resource_metadata", challenge.resourceMetadata]);
  if (challenge.scopes !== undefined && challenge.scopes.length > 0)
    params.push(["scope", challenge.scopes.join(" ")]);
  if (challenge.error !== undefined) params.push(["error", challenge.error]);
  if (challenge.errorDescription !== undefined)
    params.push(["error_description", challenge.errorDescription]);
  return `Bearer ${params.map(([name, value]) => `${name}="${quoted(value)}"`).join(", ")}`;
}

/**
 * A quoted-string's content: `"` and `\` escaped, and nothing but printable ASCII (RFC 6750
 * limits error_description to it; a header must not carry a line break).
 */
function quoted(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, "?").replace(/["\\]/g, (char) => `\\${char}`);
}
