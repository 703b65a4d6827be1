/**
 * The gateway as an OpenID Connect client of `[gateway.oauth] issuer`, by `openid-client`: the
 * issuer's metadata discovered once (retried after a cooldown when it fails), the authorization
 * URL of a login (code flow, PKCE S256, state, nonce, and the gateway's root as the RFC 8707
 * resource when no `audience` is configured), and the code exchanged at the token endpoint with
 * the verifier, the state and the nonce checked (openid-client checks the ID token's `iss`,
 * `aud`, `exp` and `nonce`, and the `iss` of the answer where the issuer sends one, RFC 9207).
 * Every request to the issuer goes through `boundedFetch`: a deadline, a size cap, no redirect.
 */
import {
  AuthorizationResponseError,
  allowInsecureRequests,
  buildAuthorizationUrl,
  ClientSecretBasic,
  type Configuration,
  customFetch,
  discovery,
  None,
  ResponseBodyError,
  authorizationCodeGrant as redeemCode,
} from "openid-client";
import { boundedFetch, IssuerUnavailable } from "../oauth/bounded-fetch.js";

export interface OidcClientLimits {
  /** Each request to the issuer. */
  timeoutMs: number;
  /** Its metadata and its token answers. */
  maxBytes: number;
  /** The least time between two discoveries after one failed. */
  cooldownMs: number;
}

export interface LoginRequest {
  redirectUri: string;
  scope: string;
  state: string;
  nonce: string;
  codeChallenge: string;
  /** RFC 8707: the resource the access token is to be for. */
  resource?: string;
}

/** Why a code could not be redeemed: the browser's sign-in failed (400), or the issuer could not be asked (503). */
export class CodeRefused extends Error {
  override readonly name = "CodeRefused";
}

export class OidcClient {
  readonly #issuer: string;
  readonly #clientId: string;
  readonly #clientSecret: string | undefined;
  readonly #limits: OidcClientLimits;
  #config: Configuration | undefined;
  #discovering: Promise<Configuration> | undefined;
  #failedAt = Number.NEGATIVE_INFINITY;
  #failure = "";

  constructor(options: {
    issuer: string;
    clientId: string;
    clientSecret?: string | undefined;
    limits: OidcClientLimits;
  }) {
    this.#issuer = options.issuer;
    this.#clientId = options.clientId;
    this.#clientSecret = options.clientSecret;
    this.#limits = options.limits;
  }

  /** Where to send the browser to sign in; throws `IssuerUnavailable`. */
  async authorizationUrl(login: LoginRequest): Promise<URL> {
    const config = await this.#configuration();
    return buildAuthorizationUrl(config, {
      redirect_uri: login.redirectUri,
      scope: login.scope,
      state: login.state,
      nonce: login.nonce,
      code_challenge: login.codeChallenge,
      code_challenge_method: "S256",
      ...(login.resource === undefined ? {} : { resource: login.resource }),
    });
  }

  /**
   * The access token for the code in `callbackUrl` (the URL the issuer sent the browser to,
   * whose origin and path are the redirect URI); throws `CodeRefused` or `IssuerUnavailable`.
   */
  async redeem(
    callbackUrl: URL,
    checks: { state: string; nonce: string; verifier: string; resource?: string },
  ): Promise<{ accessToken: string }> {
    const config = await this.#configuration();
    try {
      const tokens = await redeemCode(
        config,
        callbackUrl,
        { expectedState: checks.state, expectedNonce: checks.nonce, pkceCodeVerifier: checks.verifier },
        checks.resource === undefined ? undefined : { resource: checks.resource },
      );
      return { accessToken: tokens.access_token };
    } catch (error) {
      const unavailable = issuerUnavailable(error, "the identity provider's token endpoint");
      if (unavailable) throw unavailable;
      if (error instanceof AuthorizationResponseError) {
        throw new CodeRefused(
          `the identity provider answered ${error.error}${error.error_description ? ` (${error.error_description})` : ""}`,
        );
      }
      if (error instanceof ResponseBodyError) {
        throw new CodeRefused(
          `the identity provider's token endpoint refused the code: ${error.error}${error.error_description ? ` (${error.error_description})` : ""}`,
        );
      }
      throw new CodeRefused(
        `the identity provider's answer did not pass the checks: ${(error as Error).message}`,
      );
    }
  }

  #configuration(): Promise<Configuration> {
    if (this.#config) return Promise.resolve(this.#config);
    if (this.#discovering) return this.#discovering;
    const since = performance.now() - this.#failedAt;
    if (since < this.#limits.cooldownMs) {
      return Promise.reject(
        new IssuerUnavailable(
          `${this.#failure}; trying again in ${Math.ceil((this.#limits.cooldownMs - since) / 1000)} s`,
        ),
      );
    }
    this.#discovering = this.#discover()
      .then((config) => {
        this.#config = config;
        return config;
      })
      .catch((error: unknown) => {
        this.#failedAt = performance.now();
        const what = `the OpenID Connect metadata of ${this.#issuer}`;
        this.#failure =
          issuerUnavailable(error, what)?.message ??
          `${what} could not be used (${(error as Error).message})`;
        throw new IssuerUnavailable(this.#failure);
      })
      .finally(() => {
        this.#discovering = undefined;
      });
    return this.#discovering;
  }

  #discover(): Promise<Configuration> {
    const issuer = new URL(this.#issuer);
    const bounds = { timeoutMs: this.#limits.timeoutMs, maxBytes: this.#limits.maxBytes };
    return discovery(
      issuer,
      this.#clientId,
      undefined,
      this.#clientSecret === undefined ? None() : ClientSecretBasic(this.#clientSecret),
      {
        // [gateway.oauth] allows http only on loopback (a development identity provider).
        ...(issuer.protocol === "http:" ? { execute: [allowInsecureRequests] } : {}),
        [customFetch]: (url, options) =>
          boundedFetch(
            url,
            {
              method: options.method,
              headers: options.headers,
              body: options.body as RequestInit["body"],
              ...(options.signal ? { signal: options.signal } : {}),
            },
            bounds,
            `the identity provider (${new URL(url).pathname})`,
          ),
        timeout: Math.ceil(this.#limits.timeoutMs / 1000),
      },
    );
  }
}

/**
 * The issuer could not be asked, as opposed to a sign-in it refused: our own bounded fetch
 * failed (openid-client wraps that error in its own, as `cause`), the issuer answered with a
 * status it may not send (a 5xx), or the request ran out of time.
 */
function issuerUnavailable(error: unknown, what: string): IssuerUnavailable | undefined {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof IssuerUnavailable) return cause;
  }
  const { code, cause } = error as { code?: string; cause?: unknown };
  if (code === "OAUTH_RESPONSE_IS_NOT_CONFORM" && cause instanceof Response) {
    return new IssuerUnavailable(`${what} answered HTTP ${cause.status}`);
  }
  if (code === "OAUTH_TIMEOUT" || code === "OAUTH_ABORT") {
    return new IssuerUnavailable(`${what} did not answer in time`);
  }
  return undefined;
}
