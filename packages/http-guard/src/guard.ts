/**
 * The one guard in front of every toolbus HTTP server (the gateway, the approvals inbox run
 * alone): security headers on every answer, the Host/Origin check, bearer tokens to principals,
 * and the access each route declares (`{config: {access}}`, see core/access.ts) against the
 * principal's role. Installed on the root instance before any route, so it covers them all.
 * A route reads who is asking with `principalOf(request)`, and takes an event-stream slot with
 * `takeStreamSlot(request)`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { GatewayPrincipal } from "@toolbus/config";
import { type ErrorCode, HTTP_STATUS_BY_CODE, HttpRefusal, RETRYABLE_BY_DEFAULT } from "@toolbus/protocol";
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  RawServerDefault,
} from "fastify";
import {
  type Access,
  forbiddenMessage,
  isAccess,
  needsHostCheck,
  needsToken,
  permits,
} from "./core/access.js";
import { bearerToken } from "./core/bearer.js";
import { checkHost } from "./core/host-check.js";
import { type SlotGrant, type StreamLimits, StreamSlots } from "./core/stream-slots.js";
import { type Principal, tokenMatcher } from "./token-matcher.js";

/** Who is asking when auth is off (no tokens configured): one principal that may do everything. */
export const ANONYMOUS: Readonly<Principal> = Object.freeze({ name: "anonymous", role: "admin" });

/** Sent with every answer; pages replace the CSP with their own (see pageHeaders). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "content-security-policy": "default-src 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
});

export interface HttpGuardOptions {
  /** `[gateway] allowed_hosts`. */
  allowedHosts: readonly string[];
  /** From `resolveGatewayTokens`; none turns auth off (everyone is `ANONYMOUS`). */
  principals: readonly GatewayPrincipal[];
  streams: StreamLimits;
  /**
   * The body of a refusal; default `{error:{code,message,retryable}}` (the REST shape). `code`
   * and `status` are the protocol's (HTTP_STATUS_BY_CODE, HttpRefusal).
   */
  refusal?: (status: number, message: string, code: ErrorCode) => unknown;
  /** Told of every refusal (a caller's fault: log it at info). */
  onRefused?: (details: { status: number; method: string; url: string; message: string }) => void;
}

interface RequestContext {
  principal: Principal | undefined;
  slots: StreamSlots;
}

const contexts = new WeakMap<IncomingMessage, RequestContext>();

/** `{config: {access}}` for a route's options. */
export function routeAccess(access: Access): { config: { access: Access } } {
  return { config: { access } };
}

export function installHttpGuard<L extends FastifyBaseLogger>(
  app: FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, L>,
  options: HttpGuardOptions,
): void {
  const authOn = options.principals.length > 0;
  const match = tokenMatcher(options.principals);
  const slots = new StreamSlots(options.streams);
  const refusal = options.refusal ?? ((_status, message, code) => wireRefusal(code, message));

  app.addHook("onRequest", async (request, reply) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.raw.setHeader(name, value);
    const access = accessOf(request);
    const refuse = ({ code, status }: { code: ErrorCode; status: number }, message: string) => {
      options.onRefused?.({ status, method: request.method, url: request.url.split("?")[0] ?? "", message });
      if (status === HTTP_STATUS_BY_CODE.unauthorized)
        reply.header("www-authenticate", 'Bearer realm="toolbus"');
      return reply.code(status).send(refusal(status, message, code));
    };
    if (needsHostCheck(access)) {
      const host = checkHost(
        { host: request.headers.host, origin: request.headers.origin },
        options.allowedHosts,
        request.method,
      );
      if (!host.ok) return refuse(HttpRefusal.forbidden, host.message);
    }
    const principal = authOn ? match(bearerToken(request.headers.authorization)) : ANONYMOUS;
    if (needsToken(access)) {
      if (principal === undefined) {
        return refuse(
          { code: "unauthorized", status: HTTP_STATUS_BY_CODE.unauthorized },
          "Unauthorized: send the header Authorization: Bearer <token> with a token from [gateway] tokens_env",
        );
      }
      if (!permits(principal.role, access))
        return refuse(HttpRefusal.forbidden, forbiddenMessage(principal, access));
    }
    contexts.set(request.raw, { principal, slots });
    return undefined;
  });
}

/** Who sent the request (undefined on a token-free route without a token, or with no guard). */
export function principalOf(request: Pick<FastifyRequest, "raw">): Principal | undefined {
  return contexts.get(request.raw)?.principal;
}

/**
 * A slot for an event stream the request opens; release it when the stream ends. Without a
 * guard (a server built bare, in a test) streams are not counted.
 */
export function takeStreamSlot(request: Pick<FastifyRequest, "raw">): SlotGrant {
  const context = contexts.get(request.raw);
  if (!context) return { ok: true, release: () => undefined };
  return context.slots.take(context.principal?.name ?? ANONYMOUS.name);
}

/** Sends a refused stream slot as the REST error shape, with Retry-After. */
export function sendSlotRefusal(reply: FastifyReply, grant: Extract<SlotGrant, { ok: false }>): FastifyReply {
  return reply.code(grant.status).header("retry-after", "5").send(wireRefusal(grant.code, grant.message));
}

function accessOf(request: FastifyRequest): Access {
  // An unknown path answers 404 to anyone with a token, and 401 without one.
  if (request.is404) return "read";
  const declared = (request.routeOptions.config as { access?: unknown } | undefined)?.access;
  return isAccess(declared) ? declared : "admin";
}

function wireRefusal(code: ErrorCode, message: string): unknown {
  return { error: { code, message, retryable: RETRYABLE_BY_DEFAULT[code] } };
}
