/**
 * The one guard in front of every toolbus HTTP server (the gateway, the approvals inbox run
 * alone): security headers on every answer, the Host/Origin check, bearer tokens to principals
 * (configured tokens, and OAuth access tokens when a resource server is given), the session
 * cookie of browser sign-in when it is on (with its CSRF and Origin check on every request that
 * changes something), and the access each route declares (`{config: {access}}`, see core/access.ts) against the principal's role.
 * Installed on the root instance before any route, so it covers them all. A route reads who is
 * asking with `principalOf(request)`, and takes an event-stream slot with `takeStreamSlot(request)`.
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
import { bearerChallenge, type Challenge } from "./core/bearer-challenge.js";
import { checkHost } from "./core/host-check.js";
import { acceptedAudiences, challengeScopes, forbiddenChallenge } from "./core/oauth-edge.js";
import { metadataUrl, requestOrigin, resourcePathOf } from "./core/resource-uri.js";
import { CSRF_HEADER, checkCookieRequest, SIGNIN_PATHS } from "./core/signin.js";
import { type SlotGrant, type StreamLimits, StreamSlots } from "./core/stream-slots.js";
import type { OAuthResourceServer } from "./oauth/resource-server.js";
import { installResourceMetadata } from "./resource-metadata.js";
import type { BrowserSignIn } from "./signin/browser-signin.js";
import { installSignInRoutes } from "./signin/signin-routes.js";
import { type Principal, tokenMatcher } from "./token-matcher.js";

/** Who is asking when auth is off (no tokens configured): one principal that may do everything. */
export const ANONYMOUS: Readonly<Principal> = Object.freeze({
  name: "anonymous",
  role: "admin",
  source: "anonymous",
});

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
  /** From `resolveGatewayTokens`; none, and no `oauth`, turns auth off (everyone is `ANONYMOUS`). */
  principals: readonly GatewayPrincipal[];
  /**
   * OAuth access tokens accepted beside the configured tokens (`createOAuthResourceServer`);
   * also serves the protected resource metadata (RFC 9728) of each resource.
   */
  oauth?: OAuthResourceServer;
  /**
   * Browser sign-in (`createBrowserSignIn`, at the issuer of `oauth`): its routes under `/auth/`,
   * and its session cookie accepted on every route but the resources of their own (`/mcp`) when
   * a request sends no Authorization header.
   */
  signin?: BrowserSignIn;
  /** `[gateway] public_url`: the origin resources are named after; absent: each request's Host. */
  publicUrl?: string;
  streams: StreamLimits;
  /**
   * The body of a refusal; default `{error:{code,message,retryable}}` (the REST shape). `code`
   * and `status` are the protocol's (HTTP_STATUS_BY_CODE, HttpRefusal).
   */
  refusal?: (status: number, message: string, code: ErrorCode) => unknown;
  /** Told of every refusal (a caller's fault: log it at info). */
  onRefused?: (details: {
    status: number;
    method: string;
    url: string;
    message: string;
    /** Who was refused, when it was a principal (a 403). */
    principal?: string;
  }) => void;
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
  const { oauth, signin } = options;
  const authOn = options.principals.length > 0 || oauth !== undefined;
  const match = tokenMatcher(options.principals);
  const slots = new StreamSlots(options.streams);
  const refusal = options.refusal ?? ((_status, message, code) => wireRefusal(code, message));

  app.addHook("onRequest", async (request, reply) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.raw.setHeader(name, value);
    const access = accessOf(request);
    const path = request.url.split("?")[0] ?? "";
    const refuse = (
      { code, status }: { code: ErrorCode; status: number },
      message: string,
      challenge?: Challenge,
      principal?: Principal,
    ) => {
      options.onRefused?.({
        status,
        method: request.method,
        url: path,
        message,
        ...(principal ? { principal: principal.name } : {}),
      });
      if (challenge) reply.header("www-authenticate", bearerChallenge(challenge));
      if (status === HTTP_STATUS_BY_CODE.server_unavailable) reply.header("retry-after", "5");
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
    if (!authOn) {
      contexts.set(request.raw, { principal: ANONYMOUS, slots });
      return undefined;
    }
    const token = bearerToken(request.headers.authorization);
    let principal = match(token);
    if (!needsToken(access)) {
      // Served to anyone: a configured token still says who it is; no access token is checked.
      contexts.set(request.raw, { principal, slots });
      return undefined;
    }
    // Which resource this is, for OAuth: its audiences, and where its metadata is.
    const origin = oauth ? requestOrigin(options.publicUrl, request.headers.host) : undefined;
    const resourcePath = oauth ? resourcePathOf(path, oauth.resourcePaths) : "";
    // A browser signed in: its cookie stands for a bearer token, on the pages' routes only
    // (never `/mcp`), and only when no Authorization header was sent (a header always wins).
    if (signin && request.headers.authorization === undefined && resourcePath === "") {
      const found = await signin.sessionOf(request.headers.cookie);
      if (found.state === "refused") {
        reply.header("set-cookie", signin.clearSession());
        return refuse(
          { code: "unauthorized", status: HTTP_STATUS_BY_CODE.unauthorized },
          `Unauthorized: the sign-in session was refused: ${found.reason}; sign in again at ${SIGNIN_PATHS.login}`,
        );
      }
      if (found.state === "ok") {
        const checked =
          origin === undefined
            ? { ok: false as const, message: "Forbidden: the Host header names no origin of this server" }
            : checkCookieRequest(
                {
                  method: request.method,
                  origin: request.headers.origin,
                  csrfToken: firstHeader(request.headers[CSRF_HEADER]),
                },
                { origin, csrfToken: found.session.csrfToken },
              );
        if (!checked.ok)
          return refuse(HttpRefusal.forbidden, checked.message, undefined, found.session.principal);
        principal = found.session.principal;
      }
    }
    const challenge = (extra: Partial<Challenge> = {}): Challenge =>
      oauth
        ? {
            ...(origin === undefined ? {} : { resourceMetadata: metadataUrl(origin, resourcePath) }),
            scopes: challengeScopes(oauth.config),
            ...extra,
          }
        : { realm: "toolbus", ...extra };
    if (principal === undefined && token !== undefined && oauth) {
      const audiences = acceptedAudiences(oauth.config, origin, resourcePath);
      const checked = await oauth.authenticate(token, audiences);
      if (checked.ok) principal = checked.principal;
      else if (checked.status === 503) {
        return refuse(
          { code: "server_unavailable", status: HTTP_STATUS_BY_CODE.server_unavailable },
          `Service Unavailable: the access token could not be checked (${checked.reason}); retry later`,
        );
      } else {
        return refuse(
          { code: "unauthorized", status: HTTP_STATUS_BY_CODE.unauthorized },
          `Unauthorized: the access token was refused: ${checked.reason}`,
          challenge({
            error: "invalid_token",
            errorDescription: `the access token was refused: ${checked.reason}`,
          }),
        );
      }
    }
    if (principal === undefined) {
      return refuse(
        { code: "unauthorized", status: HTTP_STATUS_BY_CODE.unauthorized },
        token === undefined
          ? `Unauthorized: send the header Authorization: Bearer <token> with ${oauth ? "an access token of the issuer this server's metadata names, or " : ""}a token from [gateway] tokens_env${signin && resourcePath === "" ? `, or sign in at ${SIGNIN_PATHS.login}` : ""}`
          : "Unauthorized: the token is not one of [gateway] tokens_env",
        challenge(token === undefined ? {} : { error: "invalid_token" }),
      );
    }
    if (!permits(principal.role, access)) {
      const scopeChallenge =
        oauth && principal.source === "oauth" ? forbiddenChallenge(oauth.config, access) : undefined;
      return refuse(
        HttpRefusal.forbidden,
        forbiddenMessage(principal, access),
        scopeChallenge ? challenge(scopeChallenge) : undefined,
        principal,
      );
    }
    contexts.set(request.raw, { principal, slots });
    return undefined;
  });
  if (oauth) installResourceMetadata(app, oauth, options.publicUrl);
  if (signin) installSignInRoutes(app, signin, options.publicUrl);
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

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function wireRefusal(code: ErrorCode, message: string): unknown {
  return { error: { code, message, retryable: RETRYABLE_BY_DEFAULT[code] } };
}
