/**
 * RFC 7662 token introspection, for access tokens that are not JWTs: the gateway asks the
 * issuer, as a client of its own (`client_secret_basic`), whether a token is active and for
 * whom. Bounded: so many requests at once (more are refused as unavailable rather than queued),
 * a deadline and a size cap on each answer. (A good answer is reused: resource-server.ts.)
 */
import type { IntrospectionAnswer } from "../core/access-token.js";
import { fetchJsonObject, IssuerUnavailable } from "./bounded-fetch.js";

export interface IntrospectionLimits {
  timeoutMs: number;
  maxBytes: number;
  /** Introspection requests in flight at once. */
  concurrency: number;
}

export const DEFAULT_INTROSPECTION_LIMITS: Readonly<IntrospectionLimits> = Object.freeze({
  timeoutMs: 5_000,
  maxBytes: 64 * 1024,
  concurrency: 16,
});

export class Introspector {
  readonly #endpoint: () => Promise<string>;
  readonly #authorization: string;
  readonly #limits: IntrospectionLimits;
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
    if (this.#inFlight >= this.#limits.concurrency) {
      throw new IssuerUnavailable(
        `${this.#limits.concurrency} introspection requests are already waiting for the issuer`,
      );
    }
    this.#inFlight += 1;
    try {
      const endpoint = await this.#endpoint();
      return await fetchJsonObject(
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
    } finally {
      this.#inFlight -= 1;
    }
  }
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
