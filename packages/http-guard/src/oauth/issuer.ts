/**
 * What the gateway reads from its issuer: the metadata (OpenID Connect discovery, else RFC 8414)
 * for the key set's and the introspection endpoint's URLs, and the key set itself (JWKS), kept
 * by `jose`: fetched when first needed, again when older than `maxAgeMs`, and on a token whose
 * `kid` it does not hold (a rotation) — at most once per `cooldownMs`, one fetch at a time. A
 * failed fetch is not retried within the cooldown either: a burst of tokens while the issuer is
 * down costs it nothing.
 */
import { createRemoteJWKSet, customFetch, type JWTVerifyOptions, jwtVerify } from "jose";
import { boundedFetch, type FetchBounds, fetchJsonObject, IssuerUnavailable } from "./bounded-fetch.js";

export interface IssuerLimits {
  /** Each request to the issuer. */
  timeoutMs: number;
  /** The metadata document. */
  metadataMaxBytes: number;
  /** The key set. */
  jwksMaxBytes: number;
  /** The least time between two fetches of the keys (or of anything after a failure). */
  cooldownMs: number;
  /** Keys older than this are fetched again before use. */
  maxAgeMs: number;
}

export const DEFAULT_ISSUER_LIMITS: Readonly<IssuerLimits> = Object.freeze({
  timeoutMs: 5_000,
  metadataMaxBytes: 256 * 1024,
  jwksMaxBytes: 512 * 1024,
  cooldownMs: 30_000,
  maxAgeMs: 10 * 60_000,
});

export interface IssuerMetadata {
  jwksUri: string;
  introspectionEndpoint?: string;
}

export class Issuer {
  readonly #issuer: string;
  readonly #limits: IssuerLimits;
  readonly #isAllowedUrl: (url: URL) => boolean;
  #metadata: IssuerMetadata | undefined;
  #discovering: Promise<IssuerMetadata> | undefined;
  #discoveryFailedAt = Number.NEGATIVE_INFINITY;
  #discoveryFailure = "";
  #keys: ReturnType<typeof createRemoteJWKSet> | undefined;
  #keysFailedAt = Number.NEGATIVE_INFINITY;
  #keysFailure = "";

  /** `isAllowedUrl`: where the issuer may send the gateway (https, or http on loopback). */
  constructor(issuer: string, limits: IssuerLimits, isAllowedUrl: (url: URL) => boolean) {
    this.#issuer = issuer;
    this.#limits = limits;
    this.#isAllowedUrl = isAllowedUrl;
  }

  /** The issuer's metadata, discovered once; throws `IssuerUnavailable`. */
  metadata(): Promise<IssuerMetadata> {
    if (this.#metadata) return Promise.resolve(this.#metadata);
    if (this.#discovering) return this.#discovering;
    const since = performance.now() - this.#discoveryFailedAt;
    if (since < this.#limits.cooldownMs) {
      return Promise.reject(
        new IssuerUnavailable(
          `${this.#discoveryFailure}; trying again in ${Math.ceil((this.#limits.cooldownMs - since) / 1000)} s`,
        ),
      );
    }
    this.#discovering = this.#discover()
      .then((metadata) => {
        this.#metadata = metadata;
        return metadata;
      })
      .catch((error: unknown) => {
        this.#discoveryFailedAt = performance.now();
        this.#discoveryFailure = (error as Error).message;
        throw error;
      })
      .finally(() => {
        this.#discovering = undefined;
      });
    return this.#discovering;
  }

  /** `jwtVerify` against the issuer's keys. */
  async verify(token: string, options: JWTVerifyOptions) {
    const keys = this.#keys ?? (await this.#keySet());
    return jwtVerify(token, keys, options);
  }

  async #keySet(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    const { jwksUri } = await this.metadata();
    this.#keys ??= createRemoteJWKSet(new URL(jwksUri), {
      timeoutDuration: this.#limits.timeoutMs,
      cooldownDuration: this.#limits.cooldownMs,
      cacheMaxAge: this.#limits.maxAgeMs,
      [customFetch]: (url: string, init: RequestInit) => this.#fetchKeys(url, init),
    });
    return this.#keys;
  }

  async #fetchKeys(url: string, init: RequestInit): Promise<Response> {
    const since = performance.now() - this.#keysFailedAt;
    if (since < this.#limits.cooldownMs) {
      throw new IssuerUnavailable(
        `${this.#keysFailure}; trying again in ${Math.ceil((this.#limits.cooldownMs - since) / 1000)} s`,
      );
    }
    const what = `the issuer's key set (${url})`;
    try {
      const response = await boundedFetch(url, init, this.#bounds(this.#limits.jwksMaxBytes), what);
      if (response.status !== 200) throw new IssuerUnavailable(`${what} answered HTTP ${response.status}`);
      return response;
    } catch (error) {
      this.#keysFailedAt = performance.now();
      this.#keysFailure = (error as Error).message;
      throw error;
    }
  }

  /**
   * OpenID Connect discovery (the issuer, then `/.well-known/openid-configuration`), else RFC
   * 8414 (`/.well-known/oauth-authorization-server` before the issuer's path). The document must
   * name this issuer exactly (RFC 8414 §3.3): anything else could hand the gateway another
   * issuer's keys.
   */
  async #discover(): Promise<IssuerMetadata> {
    const issuer = new URL(this.#issuer);
    const path = issuer.pathname === "/" ? "" : issuer.pathname.replace(/\/$/, "");
    const candidates = [
      `${issuer.origin}${path}/.well-known/openid-configuration`,
      `${issuer.origin}/.well-known/oauth-authorization-server${path}`,
    ];
    const failures: string[] = [];
    for (const candidate of candidates) {
      let document: Record<string, unknown>;
      try {
        document = await fetchJsonObject(
          candidate,
          {},
          this.#bounds(this.#limits.metadataMaxBytes),
          candidate,
        );
      } catch (error) {
        failures.push((error as Error).message);
        continue;
      }
      return this.#readMetadata(document, candidate);
    }
    throw new IssuerUnavailable(
      `the metadata of the issuer ${this.#issuer} could not be read: ${failures.join("; ")}`,
    );
  }

  #readMetadata(document: Record<string, unknown>, from: string): IssuerMetadata {
    if (document.issuer !== this.#issuer) {
      throw new IssuerUnavailable(
        `${from} names the issuer ${JSON.stringify(document.issuer)}, not ${this.#issuer}; set [gateway.oauth] issuer to what the issuer calls itself`,
      );
    }
    const jwksUri = this.#endpoint(document.jwks_uri, "jwks_uri", from);
    if (jwksUri === undefined) throw new IssuerUnavailable(`${from} has no jwks_uri`);
    const introspectionEndpoint = this.#endpoint(
      document.introspection_endpoint,
      "introspection_endpoint",
      from,
    );
    return { jwksUri, ...(introspectionEndpoint === undefined ? {} : { introspectionEndpoint }) };
  }

  #endpoint(value: unknown, name: string, from: string): string | undefined {
    if (value === undefined) return undefined;
    const url = typeof value === "string" ? URL.parse(value) : null;
    if (url === null || !this.#isAllowedUrl(url)) {
      throw new IssuerUnavailable(
        `${from}: ${name} ${JSON.stringify(value)} is not an https URL (or http on loopback)`,
      );
    }
    return url.href;
  }

  #bounds(maxBytes: number): FetchBounds {
    return { timeoutMs: this.#limits.timeoutMs, maxBytes };
  }
}
