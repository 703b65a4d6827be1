/**
 * RFC 7662 token introspection, for access tokens that are not JWTs: the gateway asks the
 * issuer, as a client of its own (`client_secret_basic`), whether a token is active and for
 * whom. Bounded: so many requests at once (more are refused as unavailable rather than queued),
 * a deadline and a size cap on each answer. An active answer is reused for a short while, never
 * past the token's expiry, in a cache of bounded size keyed by the token's digest.
 */
import { createHash } from "node:crypto";
import type { IntrospectionAnswer } from "../core/access-token.js";
import { fetchJsonObject, IssuerUnavailable } from "./bounded-fetch.js";

export interface IntrospectionLimits {
  timeoutMs: number;
  maxBytes: number;
  /** Introspection requests in flight at once. */
  concurrency: number;
  /** How long an active answer is reused (never past the token's `exp`). */
  cacheTtlMs: number;
  cacheEntries: number;
}

export const DEFAULT_INTROSPECTION_LIMITS: Readonly<IntrospectionLimits> = Object.freeze({
  timeoutMs: 5_000,
  maxBytes: 64 * 1024,
  concurrency: 16,
  cacheTtlMs: 30_000,
  cacheEntries: 10_000,
});

export class Introspector {
  readonly #endpoint: () => Promise<string>;
  readonly #authorization: string;
  readonly #limits: IntrospectionLimits;
  readonly #cache = new Map<string, { answer: IntrospectionAnswer; until: number }>();
  #inFlight = 0;

  constructor(options: {
    endpoint: () => Promise<string>;
    clientId: string;
    clientSecret: string;
    limits: IntrospectionLimits;
  }) {
    this.#endpoint = options.endpoint;
    // RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
    const credentials = `${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`;
    this.#authorization = `Basic ${Buffer.from(credentials, "utf8").toString("base64")}`;
    this.#limits = options.limits;
  }

  /** The issuer's answer for `token`; throws `IssuerUnavailable` when there is none to be had now. */
  async introspect(token: string): Promise<IntrospectionAnswer> {
    const key = createHash("sha256").update(token, "utf8").digest("base64url");
    const now = Date.now();
    const cached = this.#cache.get(key);
    if (cached && cached.until > now) return cached.answer;
    if (cached) this.#cache.delete(key);
    if (this.#inFlight >= this.#limits.concurrency) {
      throw new IssuerUnavailable(
        `${this.#limits.concurrency} introspection requests are already waiting for the issuer`,
      );
    }
    this.#inFlight += 1;
    try {
      const endpoint = await this.#endpoint();
      const answer = await fetchJsonObject(
        endpoint,
        {
          method: "POST",
          headers: {
            authorization: this.#authorization,
            "content-type": "application/x-www-form-urlencoded",
          },
          body: new URLSearchParams({ token, token_type_hint: "access_token" }).toString(),
        },
        { timeoutMs: this.#limits.timeoutMs, maxBytes: this.#limits.maxBytes },
        `the issuer's introspection endpoint (${endpoint})`,
      );
      this.#remember(key, answer, now);
      return answer;
    } finally {
      this.#inFlight -= 1;
    }
  }

  #remember(key: string, answer: IntrospectionAnswer, now: number): void {
    if (answer.active !== true || typeof answer.exp !== "number") return;
    const until = Math.min(now + this.#limits.cacheTtlMs, answer.exp * 1000);
    if (until <= now) return;
    if (this.#cache.size >= this.#limits.cacheEntries) {
      // The oldest entry goes first (a Map keeps insertion order).
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
    this.#cache.set(key, { answer, until });
  }
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
