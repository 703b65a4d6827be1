/**
 * @toolbus/http-guard: the one guard of every toolbus HTTP server — Host/Origin checks, bearer
 * tokens with roles and principals, OAuth access tokens (a resource server, RFC 9728 metadata),
 * browser sign-in (OpenID Connect, a sealed session cookie, CSRF checks), security headers and page CSPs, the loopback-or-tokens
 * start-up rule, event-stream limits, and the health and readiness probes.
 */
export {
  ACCESS_BY_ROLE,
  ACCESS_LEVELS,
  Access,
  forbiddenMessage,
  needsHostCheck,
  needsToken,
  permits,
  rolesFor,
} from "./core/access.js";
export {
  CLOCK_SKEW_SEC,
  MAX_TOKEN_BYTES,
  principalFromClaims,
  roleOf,
} from "./core/access-token.js";
export { bearerToken } from "./core/bearer.js";
export { bearerChallenge, type Challenge } from "./core/bearer-challenge.js";
export { type BindCheck, checkBind, isLoopbackHost } from "./core/bind.js";
export { checkHost, type HostCheck, hostOfHostHeader } from "./core/host-check.js";
export {
  canonicalResource,
  METADATA_PATH,
  metadataUrl,
  requestOrigin,
  resourcePathOf,
} from "./core/resource-uri.js";
export {
  ATTEMPT_TTL_SEC,
  type CookieNames,
  CSRF_HEADER,
  checkCookieRequest,
  cookieNames,
  MAX_COOKIE_BYTES,
  SIGNIN_PATHS,
  safeReturnTo,
} from "./core/signin.js";
export { type SlotGrant, type StreamLimits, StreamSlots } from "./core/stream-slots.js";
export {
  ANONYMOUS,
  type HttpGuardOptions,
  installHttpGuard,
  principalOf,
  routeAccess,
  SECURITY_HEADERS,
  sendSlotRefusal,
  takeStreamSlot,
} from "./guard.js";
export { IssuerUnavailable } from "./oauth/bounded-fetch.js";
export { DEFAULT_INTROSPECTION_LIMITS, type IntrospectionLimits } from "./oauth/introspection.js";
export { DEFAULT_ISSUER_LIMITS, type IssuerLimits } from "./oauth/issuer.js";
export {
  type Authentication,
  createOAuthResourceServer,
  DEFAULT_TOKEN_CACHE_LIMITS,
  type OAuthResourceServer,
  type OAuthResourceServerOptions,
  type TokenCacheLimits,
} from "./oauth/resource-server.js";
export { pageCsp, pageHeaders } from "./page-csp.js";
export { CONSOLE_PAGE, INBOX_PAGE, type PageName } from "./pages.js";
export { installProbes } from "./probes.js";
export {
  type BrowserSignIn,
  type BrowserSignInOptions,
  createBrowserSignIn,
  DEFAULT_SIGNIN_LIMITS,
  type SessionLookup,
  type SignInEvent,
  type SignInLimits,
  type SignInSession,
} from "./signin/browser-signin.js";
export { type Principal, tokenMatcher } from "./token-matcher.js";
