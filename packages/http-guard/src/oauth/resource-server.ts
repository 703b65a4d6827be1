/**
 * The gateway as an OAuth 2.1 resource server: an access token becomes a principal, or a
 * refusal saying why. A JWT is checked without the network first (core/access-token.ts: shape,
 * algorithm, issuer), then against the issuer's keys (`jose`); any other token is introspected
 * when the gateway has a client for it. A good token's principal is reused for its next
 * requests, for `tokens.ttlMs` at most and never past its `exp`. The token itself is never
 * logged, never kept (only its digest, by that cache) and never sent anywhere but the issuer's
 * introspection endpoint.
 */
import { isLoopbackHost, type OAuthConfig } from "@toolbus/config";
import type { Principal } from "@toolbus/protocol";
import {
  checkIntrospection,
  looksLikeJwt,
  MAX_TOKEN_BYTES,
  precheckJwt,
  principalFromClaims,
  type VerifyFailure,
  verifyOptions,
  verifyRefusal,
} from "../core/access-token.js";
import { IssuerUnavailable } from "./bounded-fetch.js";
import { DEFAULT_INTROSPECTION_LIMITS, type IntrospectionLimits, Introspector } from "./introspection.js";
import { DEFAULT_ISSUER_LIMITS, Issuer, type IssuerLimits } from "./issuer.js";
import { TokenCache } from "./token-cache.js";

export type Authentication =
  | { ok: true; principal: Principal }
  /** 401: the token is not good here; `reason` says why (no secret in it). */
  | { ok: false; status: 401; reason: string }
  /** 503: the issuer could not be asked; the client should retry, not sign in again. */
  | { ok: false; status: 503; reason: string };

/** How long a good token's principal is reused, and how many are kept. */
export interface TokenCacheLimits {
  ttlMs: number;
  entries: number;
}

export const DEFAULT_TOKEN_CACHE_LIMITS: Readonly<TokenCacheLimits> = Object.freeze({
  ttlMs: 30_000,
  entries: 10_000,
});

export interface OAuthResourceServer {
  readonly config: OAuthConfig;
  /** Paths that are resources of their own (`/mcp`); the rest is the root resource. */
  readonly resourcePaths: readonly string[];
  /** Whether `token` is good for a resource whose accepted audiences are `audiences`. */
  authenticate(token: string, audiences: readonly string[]): Promise<Authentication>;
}

export interface OAuthResourceServerOptions {
  config: OAuthConfig;
  /** Paths that are resources of their own; default `["/mcp"]`. */
  resourcePaths?: readonly string[];
  /** The introspection client's secret (`resolveIntrospectionSecret`); needed when `config.introspection` is set. */
  introspectionSecret?: string;
  limits?: {
    issuer?: Partial<IssuerLimits>;
    introspection?: Partial<IntrospectionLimits>;
    tokens?: Partial<TokenCacheLimits>;
  };
}

/** https anywhere; http only on loopback (a development identity provider). */
export function isAllowedIssuerUrl(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
}

export function createOAuthResourceServer(options: OAuthResourceServerOptions): OAuthResourceServer {
  const { config } = options;
  const issuer = new Issuer(
    config.issuer,
    { ...DEFAULT_ISSUER_LIMITS, ...options.limits?.issuer },
    isAllowedIssuerUrl,
  );
  const tokenLimits = { ...DEFAULT_TOKEN_CACHE_LIMITS, ...options.limits?.tokens };
  const known = new TokenCache<Principal>(tokenLimits.entries);
  let introspector: Introspector | undefined;
  if (config.introspection !== undefined) {
    if (options.introspectionSecret === undefined) {
      throw new Error("[gateway.oauth] introspection is configured, but no client secret was given");
    }
    const configured = config.introspection.endpoint;
    introspector = new Introspector({
      endpoint: async () => {
        if (configured !== undefined) return configured;
        const { introspectionEndpoint } = await issuer.metadata();
        if (introspectionEndpoint === undefined) {
          throw new IssuerUnavailable(
            `the issuer ${config.issuer} publishes no introspection_endpoint; set [gateway.oauth] introspection_endpoint`,
          );
        }
        return introspectionEndpoint;
      },
      clientId: config.introspection.clientId,
      clientSecret: options.introspectionSecret,
      limits: { ...DEFAULT_INTROSPECTION_LIMITS, ...options.limits?.introspection },
    });
  }

  /** A checked token: its principal and when its issuer says it expires, or why not. */
  type Checked = { ok: true; principal: Principal; expSec: number } | Exclude<Authentication, { ok: true }>;

  async function verifyJwt(token: string, audiences: readonly string[]): Promise<Checked> {
    const precheck = precheckJwt(token, config);
    if (!precheck.ok) return { ok: false, status: 401, reason: precheck.reason };
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await issuer.verify(token, verifyOptions(config, audiences)));
    } catch (error) {
      const refusal = verifyRefusal(error as VerifyFailure, audiences);
      if (refusal === "unavailable") return unavailable(error);
      return { ok: false, status: 401, reason: refusal.reason };
    }
    return asPrincipal(claims);
  }

  async function introspect(token: string, audiences: readonly string[]): Promise<Checked> {
    if (introspector === undefined) {
      return {
        ok: false,
        status: 401,
        reason:
          "it is not a JWT, and this server does not introspect tokens (no [gateway.oauth] introspection client)",
      };
    }
    let answer: Awaited<ReturnType<Introspector["introspect"]>>;
    try {
      answer = await introspector.introspect(token);
    } catch (error) {
      return unavailable(error);
    }
    const checked = checkIntrospection(answer, {
      issuer: config.issuer,
      audiences,
      nowSec: Math.floor(Date.now() / 1000),
    });
    if (!checked.ok) return { ok: false, status: 401, reason: checked.reason };
    return asPrincipal(answer);
  }

  /** Both checks made sure `exp` is a number. */
  function asPrincipal(claims: Record<string, unknown>): Checked {
    const mapped = principalFromClaims(claims, config);
    if (!mapped.ok) return { ok: false, status: 401, reason: mapped.reason };
    return { ok: true, principal: Object.freeze(mapped.principal), expSec: claims.exp as number };
  }

  /** Checks `token` for `audiences`, or reuses what the last check of it found. */
  async function check(token: string, audiences: readonly string[]): Promise<Authentication> {
    const scope = audiences.join(" ");
    const principal = known.get(token, scope);
    if (principal) return { ok: true, principal };
    const checked = looksLikeJwt(token)
      ? await verifyJwt(token, audiences)
      : await introspect(token, audiences);
    if (!checked.ok) return checked;
    known.set(
      token,
      scope,
      checked.principal,
      Math.min(Date.now() + tokenLimits.ttlMs, checked.expSec * 1000),
    );
    return { ok: true, principal: checked.principal };
  }

  return {
    config,
    resourcePaths: options.resourcePaths ?? ["/mcp"],
    authenticate: async (token, audiences) => {
      if (token.length > MAX_TOKEN_BYTES) {
        return { ok: false, status: 401, reason: `it is longer than ${MAX_TOKEN_BYTES} bytes` };
      }
      if (audiences.length === 0) {
        return {
          ok: false,
          status: 401,
          reason:
            "the request's Host header names no resource of this server; send the host this server is reached at",
        };
      }
      return check(token, audiences);
    },
  };
}

function unavailable(error: unknown): { ok: false; status: 503; reason: string } {
  const reason =
    error instanceof IssuerUnavailable
      ? error.message
      : `the issuer's keys could not be used (${(error as Error).message ?? String(error)})`;
  return { ok: false, status: 503, reason };
}
