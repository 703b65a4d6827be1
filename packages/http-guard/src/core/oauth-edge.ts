/**
 * The guard's OAuth rules: which audiences a resource accepts, which scopes a challenge names,
 * and when a refusal for a missing role says which scopes would grant it.
 */
import type { OAuthConfig } from "@toolbus/config";
import type { PrincipalRole } from "@toolbus/protocol";
import { type Access, rolesFor } from "./access.js";
import type { Challenge } from "./bearer-challenge.js";
import { canonicalResource } from "./resource-uri.js";

/**
 * The `aud` values a token must name one of: `[gateway.oauth] audience` when set, else the
 * canonical URI of the resource asked for (none when the request names no origin).
 */
export function acceptedAudiences(
  oauth: Pick<OAuthConfig, "audience">,
  origin: string | undefined,
  resourcePath: string,
): string[] {
  if (oauth.audience !== undefined) return [...oauth.audience];
  return origin === undefined ? [] : [canonicalResource(origin, resourcePath)];
}

/** The scopes a 401 names: the ones the metadata advertises (the MCP spec's scope selection). */
export function challengeScopes(oauth: Pick<OAuthConfig, "scopesSupported">): string[] {
  return [...oauth.scopesSupported];
}

/**
 * A 403 for an OAuth principal whose role lacks `access`: `insufficient_scope` with the scopes
 * that would grant a role that has it — or nothing when no scope does (roles from groups are
 * not a token's to change, so a client is not sent to sign in again for nothing).
 */
export function forbiddenChallenge(
  oauth: Pick<OAuthConfig, "adminScopes" | "approverScopes">,
  access: Access,
): Partial<Challenge> | undefined {
  const scopesOf: Record<PrincipalRole, readonly string[]> = {
    admin: oauth.adminScopes,
    approver: oauth.approverScopes,
    caller: [],
  };
  const roles = rolesFor(access);
  const scopes = [...new Set(roles.flatMap((role) => scopesOf[role]))];
  if (scopes.length === 0) return undefined;
  return {
    scopes,
    error: "insufficient_scope",
    errorDescription: `this needs the role ${roles.join(" or ")}`,
  };
}
