/** `[gateway.oauth]` as the gateway tests configure it for a test issuer: groups `ops` admins, `reviewers` approvers. */
import type { OAuthConfig } from "@toolbus/config";

export const oauthConfig = (issuer: string, extra: Partial<OAuthConfig> = {}): OAuthConfig => ({
  issuer,
  scopesSupported: ["mcp:tools"],
  principalClaim: "sub",
  nameClaim: "name",
  groupsClaim: "groups",
  adminGroups: ["ops"],
  approverGroups: ["reviewers"],
  adminScopes: [],
  approverScopes: ["mcp:approve"],
  algorithms: ["RS256", "ES256"],
  ...extra,
});
