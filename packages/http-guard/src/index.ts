/**
 * @toolbus/http-guard: the one guard of every toolbus HTTP server — Host/Origin checks, bearer
 * tokens with roles and principals, security headers and page CSPs, the loopback-or-tokens
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
export { bearerToken } from "./core/bearer.js";
export { type BindCheck, checkBind, isLoopbackHost } from "./core/bind.js";
export { checkHost, type HostCheck, hostOfHostHeader } from "./core/host-check.js";
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
export { pageCsp, pageHeaders } from "./page-csp.js";
export { CONSOLE_PAGE, INBOX_PAGE, type PageName } from "./pages.js";
export { installProbes } from "./probes.js";
export { type Principal, tokenMatcher } from "./token-matcher.js";
