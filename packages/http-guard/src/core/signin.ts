/**
 * The rules of browser sign-in that need no I/O: the cookies (names, attributes, reading one
 * from a `Cookie` header), where a sign-in may send the browser back to, and the check every
 * request that changes something must pass when its credential is a session cookie: the exact
 * origin of the gateway in `Origin`, and the session's CSRF token in `X-CSRF-Token`.
 *
 * Two cookies, both HttpOnly (no script reads them) and `Path=/` with no `Domain` (this host
 * only):
 * - the session, `SameSite=Strict`: no request another site starts carries it, not even a link
 *   followed to the console. The pages need no cookie to load (they hold no data); their own
 *   requests to the API are same-site and carry it.
 * - the sign-in attempt (state, nonce and PKCE verifier of one login, ten minutes),
 *   `SameSite=Lax`: it must come back on the identity provider's redirect to `/auth/callback`,
 *   a top-level navigation from another site, which Strict would strip.
 * Over https both are `Secure` and named `__Host-…` (the browser then refuses them from http, from
 * a sibling subdomain, or with a Domain or another Path); on plain-http loopback (development)
 * they go without either.
 */
export const CSRF_HEADER = "x-csrf-token";

/** The paths of sign-in, all served by the gateway itself. */
export const SIGNIN_PATHS = Object.freeze({
  login: "/auth/login",
  callback: "/auth/callback",
  session: "/auth/session",
  logout: "/auth/logout",
});

/** How long a started sign-in may take: the attempt cookie's lifetime. */
export const ATTEMPT_TTL_SEC = 600;

/** A browser stores at most about 4096 bytes per cookie; a larger session would be dropped silently. */
export const MAX_COOKIE_BYTES = 4000;

export interface CookieNames {
  session: string;
  attempt: string;
  /** Sent with `Secure` (and the `__Host-` names): the gateway's public origin is https. */
  secure: boolean;
}

export function cookieNames(secure: boolean): CookieNames {
  const prefix = secure ? "__Host-" : "";
  return { session: `${prefix}toolbus-session`, attempt: `${prefix}toolbus-signin`, secure };
}

export type SameSite = "Strict" | "Lax";

/** A `Set-Cookie` value: this host only, every path, never for scripts. */
export function setCookie(
  name: string,
  value: string,
  options: { secure: boolean; sameSite: SameSite; maxAgeSec: number },
): string {
  return [
    `${name}=${value}`,
    "Path=/",
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSec))}`,
    "HttpOnly",
    `SameSite=${options.sameSite}`,
    ...(options.secure ? ["Secure"] : []),
  ].join("; ");
}

/** The `Set-Cookie` value that makes the browser forget `name`. */
export function clearCookie(name: string, options: { secure: boolean; sameSite: SameSite }): string {
  return setCookie(name, "", { ...options, maxAgeSec: 0 });
}

/**
 * The value of the first cookie called `name` in a `Cookie` header. The first, because a
 * browser sends the most specific one first, and with the `__Host-` names no other site can
 * have set one of that name.
 */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(";")) {
    const equals = pair.indexOf("=");
    if (equals < 0) continue;
    if (pair.slice(0, equals).trim() === name) {
      const value = pair.slice(equals + 1).trim();
      return value === "" ? undefined : value;
    }
  }
  return undefined;
}

/**
 * Where a sign-in may return the browser: a path of this gateway (`/`, `/approvals`), never
 * another site (`//evil.example`, `/\evil.example`, `https://…`), never a control character.
 */
export function safeReturnTo(value: unknown): string {
  if (typeof value !== "string" || value.length > 512) return "/";
  if (!value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  if (/[\p{Cc}\\]/u.test(value)) return "/";
  return value;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** A method that may change something: every one a session cookie needs the CSRF check for. */
export function isStateChanging(method: string): boolean {
  return !SAFE_METHODS.has(method.toUpperCase());
}

export type CookieRequestCheck = { ok: true } | { ok: false; message: string };

/**
 * A request whose only credential is the session cookie, and that may change something (POST,
 * PUT, PATCH, DELETE), must come from a page of this gateway: `Origin` exactly the gateway's
 * origin (a browser sends it with every such request, and a page cannot forge it), and the
 * session's CSRF token in `X-CSRF-Token` (which a page of another origin cannot read, so
 * cannot send; it also stops a sibling subdomain, which `SameSite` counts as the same site).
 */
export function checkCookieRequest(
  request: { method: string; origin: string | undefined; csrfToken: string | undefined },
  expected: { origin: string; csrfToken: string },
): CookieRequestCheck {
  if (!isStateChanging(request.method)) return { ok: true };
  if (request.origin === undefined) {
    return {
      ok: false,
      message: `Forbidden: a ${request.method} signed in by cookie must carry an Origin header (browsers send it); send it from a page of ${expected.origin}, or use Authorization: Bearer <token>`,
    };
  }
  if (request.origin !== expected.origin) {
    return {
      ok: false,
      message: `Forbidden: a ${request.method} signed in by cookie must come from a page of ${expected.origin}, not ${JSON.stringify(request.origin)}`,
    };
  }
  if (request.csrfToken === undefined || !sameSecret(request.csrfToken, expected.csrfToken)) {
    return {
      ok: false,
      message: `Forbidden: a ${request.method} signed in by cookie must carry the session's CSRF token in the ${CSRF_HEADER} header (the page reads it from ${SIGNIN_PATHS.session}); ${request.csrfToken === undefined ? "none was sent" : "the one sent is not this session's"}`,
    };
  }
  return { ok: true };
}

/** Compares every character whatever the first difference, so the time taken tells nothing. */
function sameSecret(given: string, expected: string): boolean {
  if (given.length !== expected.length) return false;
  let difference = 0;
  for (let index = 0; index < given.length; index++) {
    difference |= given.charCodeAt(index) ^ expected.charCodeAt(index);
  }
  return difference === 0;
}
