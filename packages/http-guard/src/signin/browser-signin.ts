/**
 * Browser sign-in for the console and the approvals inbox (`[gateway.signin]`): a person signs
 * in at the issuer of `[gateway.oauth]` (OpenID Connect, authorization code with PKCE), and the
 * browser gets a session cookie that stands for them on every request of the pages, as a bearer
 * token stands for a script.
 *
 * - **The login** (`GET /auth/login`): a fresh state, nonce and PKCE verifier, sealed into the
 *   attempt cookie of this browser (ten minutes), and a redirect to the issuer.
 * - **The callback** (`GET /auth/callback`): only for the browser holding that attempt, once
 *   (its id is spent on arrival), with the state it sent; the code is redeemed with its
 *   verifier and nonce, and the access token the issuer gave for this gateway is checked by
 *   the resource server exactly as a bearer token is: same audience, keys, claims and role
 *   rules, so the session's principal is the one that person's bearer token would be.
 * - **The session** is a sealed cookie (cookie-seal.ts) holding that principal, a session id
 *   and a CSRF token, for `session_ttl_sec` from the sign-in. No store is needed to read it, so
 *   every replica with the same `session_secret_env` accepts it; what is kept is only the ids of
 *   sessions that signed out (until they would have expired), on the replica where they did.
 * - **Sign-out** (`POST /auth/logout`, with the CSRF check) spends the session id and clears
 *   the cookie.
 */
import { randomBytes, randomUUID } from "node:crypto";
import type { SignInConfig } from "@toolbus/config";
import type { Principal } from "@toolbus/protocol";
import { calculatePKCECodeChallenge, randomNonce, randomPKCECodeVerifier, randomState } from "openid-client";
import { acceptedAudiences } from "../core/oauth-edge.js";
import { canonicalResource } from "../core/resource-uri.js";
import {
  ATTEMPT_TTL_SEC,
  type CookieNames,
  cookieNames,
  cookieValue,
  MAX_COOKIE_BYTES,
  SIGNIN_PATHS,
  safeReturnTo,
  setCookie,
} from "../core/signin.js";
import { IssuerUnavailable } from "../oauth/bounded-fetch.js";
import type { OAuthResourceServer } from "../oauth/resource-server.js";
import { TokenCache } from "../oauth/token-cache.js";
import { CookieSeal } from "./cookie-seal.js";
import { CodeRefused, OidcClient, type OidcClientLimits } from "./oidc-client.js";
import { SpentIds } from "./spent-ids.js";

export interface SignInLimits {
  /** Requests to the issuer: deadline, size cap, cooldown after a failed discovery. */
  issuer: OidcClientLimits;
  /** Codes being redeemed at once; more callbacks get 503. */
  redemptionsInFlight: number;
  /** Signed-out sessions and used attempts remembered (each until it would have expired). */
  spentIds: number;
  /** Opened session cookies kept (by digest, until they expire) so a page's next request skips the decryption. */
  openedSessions: number;
}

export const DEFAULT_SIGNIN_LIMITS: Readonly<SignInLimits> = Object.freeze({
  issuer: Object.freeze({ timeoutMs: 5_000, maxBytes: 256 * 1024, cooldownMs: 30_000 }),
  redemptionsInFlight: 16,
  spentIds: 10_000,
  openedSessions: 10_000,
});

/** The session a cookie holds. */
export interface SignInSession {
  sid: string;
  csrfToken: string;
  principal: Principal;
  /** When it ends (ms since the epoch). */
  expiresAt: number;
}

export type SessionLookup =
  | { state: "none" }
  | { state: "ok"; session: SignInSession }
  /** A cookie was sent and is no session (tampered, expired, signed out): `reason` says which. */
  | { state: "refused"; reason: string };

/** What a step of sign-in tells the log (never a secret, a code or a token). */
export type SignInEvent =
  | { event: "signed in"; principal: string; role: string }
  | { event: "signed out"; principal: string }
  | { event: "sign-in refused"; status: number; reason: string }
  | { event: "forgot a spent id to make room"; limit: number };

/** A step's answer, for the routes to send. */
export type SignInAnswer =
  | { kind: "redirect"; location: string; cookies: string[] }
  | { kind: "refusal"; status: 400 | 403 | 503; message: string; cookies: string[] };

export interface BrowserSignIn {
  readonly cookies: CookieNames;
  readonly sessionTtlMs: number;
  /** The session of a request's `Cookie` header. */
  sessionOf(cookieHeader: string | undefined): Promise<SessionLookup>;
  /** `GET /auth/login`: to the issuer, with a new attempt sealed into a cookie. */
  login(origin: string, returnTo: unknown): Promise<SignInAnswer>;
  /** `GET /auth/callback`: the attempt of this browser completed, or why not. */
  callback(origin: string, url: string, cookieHeader: string | undefined): Promise<SignInAnswer>;
  /** Spends a session's id: its cookie is refused from now on, here. */
  signOut(session: SignInSession): void;
  /** A `Set-Cookie` that makes the browser forget its session. */
  clearSession(): string;
}

export interface BrowserSignInOptions {
  config: SignInConfig;
  /** The resource server of `[gateway.oauth]`: its issuer, and the checks a sign-in's token passes. */
  oauth: OAuthResourceServer;
  /** `[gateway] public_url`; when https, cookies are `Secure` and `__Host-` named. */
  publicUrl?: string;
  clientSecret?: string;
  /** `session_secret_env`'s value; absent: a key of this process. */
  sessionSecret?: string;
  limits?: Partial<SignInLimits>;
  onEvent?: (event: SignInEvent) => void;
}

interface Attempt {
  aid: string;
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
  origin: string;
}

export function createBrowserSignIn(options: BrowserSignInOptions): BrowserSignIn {
  const { config, oauth } = options;
  const limits = { ...DEFAULT_SIGNIN_LIMITS, ...options.limits };
  const cookies = cookieNames(options.publicUrl?.startsWith("https:") === true);
  const seal = new CookieSeal(options.sessionSecret);
  const spent = new SpentIds(limits.spentIds);
  const opened = new TokenCache<SignInSession>(limits.openedSessions);
  const oidc = new OidcClient({
    issuer: oauth.config.issuer,
    clientId: config.clientId,
    clientSecret: options.clientSecret,
    limits: limits.issuer,
  });
  const scope = ["openid", ...(config.scopes ?? oauth.config.scopesSupported)]
    .filter((one, index, all) => all.indexOf(one) === index)
    .join(" ");
  let redeeming = 0;
  const tell = (event: SignInEvent) => options.onEvent?.(event);
  const spend = (id: string, until: number) => {
    if (spent.add(id, until).evicted) {
      tell({ event: "forgot a spent id to make room", limit: limits.spentIds });
    }
  };
  const secure = cookies.secure;
  const setAttempt = (value: string) =>
    setCookie(cookies.attempt, value, { secure, sameSite: "Lax", maxAgeSec: ATTEMPT_TTL_SEC });
  const clearAttempt = () => setCookie(cookies.attempt, "", { secure, sameSite: "Lax", maxAgeSec: 0 });
  const clearSession = () => setCookie(cookies.session, "", { secure, sameSite: "Strict", maxAgeSec: 0 });
  /**
   * The token is for the gateway's root resource (where the pages' API is): by RFC 8707 when
   * no `audience` is configured, else the issuer puts that audience in by its own configuration.
   */
  const resourceFor = (origin: string) =>
    oauth.config.audience === undefined ? canonicalResource(origin, "") : undefined;

  const refusal = (status: 400 | 403 | 503, message: string, extraCookies: string[] = []): SignInAnswer => {
    tell({ event: "sign-in refused", status, reason: message });
    return { kind: "refusal", status, message, cookies: extraCookies };
  };

  /**
   * The session a cookie holds: opened once (its decryption costs ~130 µs of CPU) and then
   * reused until it expires, for the page's next requests; whether it signed out since is
   * asked every time.
   */
  async function sessionOf(header: string | undefined): Promise<SessionLookup> {
    const value = cookieValue(header, cookies.session);
    if (value === undefined) return { state: "none" };
    let session = opened.get(value, "session");
    if (session === undefined) {
      const sealed = await seal.open("session", value, MAX_COOKIE_BYTES);
      if (!sealed.ok) return { state: "refused", reason: sealed.reason };
      const { sid, csrf, principal, exp } = sealed.claims;
      if (typeof sid !== "string" || typeof csrf !== "string" || !isPrincipal(principal)) {
        return { state: "refused", reason: "it holds no session" };
      }
      session = Object.freeze({ sid, csrfToken: csrf, principal, expiresAt: (exp as number) * 1000 });
      opened.set(value, "session", session, session.expiresAt);
    }
    if (spent.has(session.sid)) return { state: "refused", reason: "it was signed out" };
    return { state: "ok", session };
  }

  async function login(origin: string, returnTo: unknown): Promise<SignInAnswer> {
    const attempt: Attempt = {
      aid: randomUUID(),
      state: randomState(),
      nonce: randomNonce(),
      verifier: randomPKCECodeVerifier(),
      returnTo: safeReturnTo(returnTo),
      origin,
    };
    const resource = resourceFor(origin);
    let location: URL;
    try {
      location = await oidc.authorizationUrl({
        redirectUri: `${origin}${SIGNIN_PATHS.callback}`,
        scope,
        state: attempt.state,
        nonce: attempt.nonce,
        codeChallenge: await calculatePKCECodeChallenge(attempt.verifier),
        ...(resource === undefined ? {} : { resource }),
      });
    } catch (error) {
      if (!(error instanceof IssuerUnavailable)) throw error;
      return refusal(503, `Service Unavailable: cannot sign in now: ${error.message}; try again shortly`);
    }
    const sealed = await seal.seal(
      "attempt",
      { ...attempt },
      Math.floor(Date.now() / 1000) + ATTEMPT_TTL_SEC,
    );
    return { kind: "redirect", location: location.href, cookies: [setAttempt(sealed)] };
  }

  async function callback(origin: string, url: string, header: string | undefined): Promise<SignInAnswer> {
    const startAgain = `start again at ${SIGNIN_PATHS.login}`;
    const value = cookieValue(header, cookies.attempt);
    if (value === undefined) {
      return refusal(
        400,
        `Bad Request: this browser has no sign-in under way (none was started here, or it took more than ${ATTEMPT_TTL_SEC / 60} minutes); ${startAgain}`,
      );
    }
    const opened = await seal.open("attempt", value, MAX_COOKIE_BYTES);
    if (!opened.ok) {
      return refusal(400, `Bad Request: the sign-in cookie was refused: ${opened.reason}; ${startAgain}`, [
        clearAttempt(),
      ]);
    }
    if (!isAttempt(opened.claims)) {
      return refusal(400, `Bad Request: the sign-in cookie holds no sign-in; ${startAgain}`, [
        clearAttempt(),
      ]);
    }
    const attempt = opened.claims;
    const callbackUrl = new URL(url, attempt.origin);
    if (attempt.origin !== origin) {
      return refusal(
        400,
        `Bad Request: the sign-in was started at ${attempt.origin}, not ${origin}; ${startAgain}`,
        [clearAttempt()],
      );
    }
    if (spent.has(attempt.aid)) {
      return refusal(400, `Bad Request: this sign-in was already completed once; ${startAgain}`, [
        clearAttempt(),
      ]);
    }
    const state = callbackUrl.searchParams.get("state");
    if (state !== attempt.state) {
      return refusal(
        400,
        `Bad Request: the callback's state is not the one this browser's sign-in sent (a callback meant for another sign-in, or another browser); ${startAgain}`,
        [clearAttempt()],
      );
    }
    // Spent before the code is redeemed: a second callback with this cookie finds it spent.
    spend(attempt.aid, attempt.exp * 1000);
    if (redeeming >= limits.redemptionsInFlight) {
      return refusal(
        503,
        `Service Unavailable: ${limits.redemptionsInFlight} sign-ins are being completed at once; ${startAgain} in a moment`,
        [clearAttempt()],
      );
    }
    redeeming += 1;
    let accessToken: string;
    try {
      const resource = resourceFor(origin);
      ({ accessToken } = await oidc.redeem(callbackUrl, {
        state: attempt.state,
        nonce: attempt.nonce,
        verifier: attempt.verifier,
        ...(resource === undefined ? {} : { resource }),
      }));
    } catch (error) {
      if (error instanceof IssuerUnavailable) {
        return refusal(503, `Service Unavailable: cannot sign in now: ${error.message}; ${startAgain}`, [
          clearAttempt(),
        ]);
      }
      if (error instanceof CodeRefused) {
        return refusal(400, `Bad Request: the sign-in failed: ${error.message}; ${startAgain}`, [
          clearAttempt(),
        ]);
      }
      throw error;
    } finally {
      redeeming -= 1;
    }
    // The token the issuer gave for this gateway, checked as any bearer token is.
    const checked = await oauth.authenticate(accessToken, acceptedAudiences(oauth.config, origin, ""));
    if (!checked.ok) {
      return checked.status === 503
        ? refusal(503, `Service Unavailable: cannot sign in now: ${checked.reason}; ${startAgain}`, [
            clearAttempt(),
          ])
        : refusal(
            403,
            `Forbidden: the identity provider's access token for this gateway was refused: ${checked.reason}`,
            [clearAttempt()],
          );
    }
    const { principal } = checked;
    const expSec = Math.floor((Date.now() + config.sessionTtlMs) / 1000);
    const sealed = await seal.seal(
      "session",
      { sid: randomUUID(), csrf: randomBytes(32).toString("base64url"), principal },
      expSec,
    );
    if (cookies.session.length + 1 + sealed.length > MAX_COOKIE_BYTES) {
      return refusal(
        403,
        `Forbidden: the session of ${principal.name} would take ${sealed.length} bytes, more than a browser keeps in a cookie (${MAX_COOKIE_BYTES}); have the identity provider name fewer groups in its tokens for this client`,
        [clearAttempt()],
      );
    }
    tell({ event: "signed in", principal: principal.name, role: principal.role });
    return {
      kind: "redirect",
      location: attempt.returnTo,
      cookies: [
        clearAttempt(),
        setCookie(cookies.session, sealed, {
          secure,
          sameSite: "Strict",
          maxAgeSec: expSec - Math.floor(Date.now() / 1000),
        }),
      ],
    };
  }

  return {
    cookies,
    sessionTtlMs: config.sessionTtlMs,
    sessionOf,
    login,
    callback,
    signOut: (session) => {
      spend(session.sid, session.expiresAt);
      tell({ event: "signed out", principal: session.principal.name });
    },
    clearSession,
  };
}

function isAttempt(
  claims: Record<string, unknown>,
): claims is Record<string, unknown> & Attempt & { exp: number } {
  return (
    ["aid", "state", "nonce", "verifier", "returnTo", "origin"].every(
      (key) => typeof claims[key] === "string",
    ) && typeof claims.exp === "number"
  );
}

function isPrincipal(value: unknown): value is Principal {
  if (value === null || typeof value !== "object") return false;
  const { name, role, source } = value as Record<string, unknown>;
  return (
    typeof name === "string" &&
    (role === "caller" || role === "approver" || role === "admin") &&
    source === "oauth"
  );
}
