/**
 * Who may do what at the HTTP edge: every route declares the access it needs, and a token's role
 * grants a set of accesses. One table (`ACCESS_BY_ROLE`); a route that declares nothing needs
 * `admin`, so a new route is closed until someone says who it is for.
 */
import type { GatewayRole } from "@toolbus/config";

export const Access = {
  /** Liveness: no Host check (probes use the pod address), no token. */
  health: "health",
  /** Readiness: no Host check, any valid token. */
  probe: "probe",
  /** A page that holds no data (the console, the inbox): Host checked, no token. */
  page: "page",
  /** OAuth protected resource metadata (RFC 9728), what a client reads to sign in: Host checked, no token. */
  discovery: "discovery",
  /** Catalog, servers, events, the OpenAPI document. */
  read: "read",
  /** Tool calls: `/mcp`, `POST /v1/calls`, `DELETE /v1/calls/{callId}`. */
  call: "call",
  /** Approval requests: list, answer, their stream. */
  approve: "approve",
  /** Anything not declared. */
  admin: "admin",
} as const;
export type Access = (typeof Access)[keyof typeof Access];
export const ACCESS_LEVELS = Object.values(Access);

/** What each role may do; `health`, `page` and `discovery` need no token at all. */
export const ACCESS_BY_ROLE: Readonly<Record<GatewayRole, readonly Access[]>> = {
  caller: [Access.probe, Access.read, Access.call],
  approver: [Access.probe, Access.read, Access.approve],
  admin: ACCESS_LEVELS,
};

/** Accesses served without a token. */
const TOKEN_FREE: ReadonlySet<Access> = new Set([Access.health, Access.page, Access.discovery]);
/** Accesses served whatever the Host header says. */
const HOST_FREE: ReadonlySet<Access> = new Set([Access.health, Access.probe]);

export function needsToken(access: Access): boolean {
  return !TOKEN_FREE.has(access);
}

export function needsHostCheck(access: Access): boolean {
  return !HOST_FREE.has(access);
}

export function permits(role: GatewayRole, access: Access): boolean {
  return !needsToken(access) || ACCESS_BY_ROLE[role].includes(access);
}

/** The roles that grant `access`, for the refusal's message. */
export function rolesFor(access: Access): GatewayRole[] {
  return (Object.keys(ACCESS_BY_ROLE) as GatewayRole[]).filter((role) =>
    ACCESS_BY_ROLE[role].includes(access),
  );
}

export function forbiddenMessage(principal: { name: string; role: GatewayRole }, access: Access): string {
  return `Forbidden: the token of ${principal.name} has role ${principal.role}, and this needs ${rolesFor(access).join(" or ")} (access "${access}"); use a token with one of those roles`;
}

export function isAccess(value: unknown): value is Access {
  return typeof value === "string" && (ACCESS_LEVELS as readonly string[]).includes(value);
}
