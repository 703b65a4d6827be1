/**
 * Who a request at the HTTP edge comes from. The edge authenticates it (a static token, or an
 * OAuth access token) and the rest of toolbus knows it by this one shape, so a principal can
 * later travel with what it asked for without each service reinventing it.
 */

/** What a principal may do at the edge (the table is `ACCESS_BY_ROLE` in @toolbus/http-guard). */
export const PrincipalRole = { caller: "caller", approver: "approver", admin: "admin" } as const;
export type PrincipalRole = (typeof PrincipalRole)[keyof typeof PrincipalRole];
export const PRINCIPAL_ROLES = Object.values(PrincipalRole);

/** How the edge knows who it is. */
export type PrincipalSource =
  /** A token from `[gateway] tokens_env`. */
  | "token"
  /** An access token of `[gateway.oauth] issuer`, validated at the edge. */
  | "oauth"
  /** Nobody: auth is off (loopback, or `allow_unauthenticated`). */
  | "anonymous";

/**
 * The prefix of an OAuth principal's `name`. A configured token's name never holds `:`
 * (`PRINCIPAL_NAME_PATTERN`), so an identity provider's user can never take the name, and
 * with it the sessions and threads, of a configured token.
 */
export const OAUTH_PRINCIPAL_PREFIX = "oauth:";

export interface Principal {
  /**
   * The key of who it is: what owns MCP sessions and threads, and what an approval records as
   * who answered (`by`). A token's configured name; `oauth:<principal claim>` for an access token.
   */
  name: string;
  role: PrincipalRole;
  source: PrincipalSource;
  /** OAuth: the value of the principal claim (`[gateway.oauth] principal_claim`, default `sub`). */
  subject?: string;
  /** OAuth: the issuer that vouched for it. */
  issuer?: string;
  /** OAuth: a name to show (`name_claim`); never used to decide anything. */
  displayName?: string;
  /** OAuth: the groups the token names (`groups_claim`). */
  groups?: readonly string[];
  /** OAuth: the scopes the token grants (`scope`, or `scp`). */
  scopes?: readonly string[];
}
