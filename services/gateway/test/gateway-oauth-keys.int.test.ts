/**
 * The issuer's keys as the gateway keeps them, against a real identity provider: fetched again
 * when a token names a key the gateway does not hold (the provider rotated its keys), but at
 * most once per cooldown however many tokens name unknown keys, and an issuer that fails,
 * hangs or sends too much costs one bounded attempt per cooldown and is answered 503 (retry),
 * never 401 (sign in again). Each gateway here has its own cooldown; none needs tools.
 */
import type { OAuthConfig } from "@toolbus/config";
import { type IdentityProvider, startIdentityProvider } from "@toolbus/testkit/identity-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { initializeBody, rawRequest } from "./support/http.js";
import { Stack } from "./support/stack.js";

let idp: IdentityProvider;
let stack: Stack;

const HOUR_MS = 60 * 60_000;

const oauth = (issuer: string): OAuthConfig => ({
  issuer,
  scopesSupported: [],
  principalClaim: "sub",
  nameClaim: "name",
  groupsClaim: "groups",
  adminGroups: [],
  approverGroups: [],
  adminScopes: [],
  approverScopes: [],
  algorithms: ["RS256"],
});

beforeAll(async () => {
  idp = await startIdentityProvider();
  // A catalog with no servers: the edge needs a catalog to be ready, not tools.
  stack = await Stack.start("gw_oauth_keys", "", ["catalog"]);
}, 180_000);

afterAll(async () => {
  await stack?.close();
  await idp?.stop();
});

/** A gateway of its own, whose keys are fetched at most once per `cooldownMs`. */
const gatewayWith = (cooldownMs: number, timeoutMs = 5_000) =>
  stack.gateway({ oauth: oauth(idp.issuer), limits: { oauth: { issuer: { cooldownMs, timeoutMs } } } });

const nowSec = () => Math.floor(Date.now() / 1000);
const initialize = (gateway: GatewayService, token: string) =>
  rawRequest(gateway.url, { headers: { authorization: `Bearer ${token}` }, body: initializeBody() });

describe("the issuer's keys", () => {
  it("are fetched again when a token names a key the gateway does not hold: the provider rotated", async () => {
    const gateway = await gatewayWith(0);
    const resource = `${gateway.url}/mcp`;
    const before = await idp.accessToken({ login: "alice", resource });
    expect((await initialize(gateway, before)).status).toBe(200);
    const fetched = idp.requests("/jwks");

    await idp.rotateKeys();
    const after = await idp.accessToken({ login: "alice", resource });
    expect(after).not.toBe(before);
    expect([(await initialize(gateway, after)).status, (await initialize(gateway, before)).status]).toEqual([
      200, 200,
    ]);
    // One fetch for the new key; the old one was still held.
    expect(idp.requests("/jwks") - fetched).toBe(1);
  });

  it("are fetched at most once per cooldown, however many tokens name keys nobody published", async () => {
    const gateway = await gatewayWith(HOUR_MS);
    const good = await idp.accessToken({ login: "alice", resource: `${gateway.url}/mcp` });
    expect((await initialize(gateway, good)).status).toBe(200);
    const fetched = idp.requests("/jwks");

    const forged = await Promise.all(
      Array.from({ length: 40 }, () =>
        idp.signWithUnknownKey({
          iss: idp.issuer,
          sub: "mallory",
          aud: `${gateway.url}/mcp`,
          exp: nowSec() + 600,
        }),
      ),
    );
    const statuses = await Promise.all(
      forged.map((token) => initialize(gateway, token).then((r) => r.status)),
    );
    expect(new Set(statuses)).toEqual(new Set([401]));
    expect(idp.requests("/jwks")).toBe(fetched);
    // The good token still works from the keys held.
    expect((await initialize(gateway, good)).status).toBe(200);
  });
});

describe("an issuer that cannot be asked", () => {
  it("that answers 500 for its keys: every request 503 with Retry-After, one attempt per cooldown", async () => {
    const gateway = await gatewayWith(HOUR_MS);
    const token = await idp.sign({
      iss: idp.issuer,
      sub: "alice",
      aud: `${gateway.url}/mcp`,
      exp: nowSec() + 600,
    });
    idp.respondInstead("/jwks", { status: 500, body: "{}" });
    try {
      const from = idp.requests("/jwks");
      // At once (they share the one fetch under way), then one after another (each would try again).
      const responses = await Promise.all(Array.from({ length: 10 }, () => initialize(gateway, token)));
      for (let i = 0; i < 10; i++) responses.push(await initialize(gateway, token));
      expect(new Set(responses.map((response) => response.status))).toEqual(new Set([503]));
      const [first] = responses;
      expect(first?.headers["retry-after"]).toBe("5");
      expect(idp.requests("/jwks") - from).toBe(1);
      expect((first?.json as { error: { message: string } } | undefined)?.error.message).toContain(
        `the issuer's key set (${idp.issuer}/jwks) answered HTTP 500`,
      );
    } finally {
      idp.respondInstead("/jwks", undefined);
    }
  });

  it("whose metadata cannot be read: 503, and discovery tried once per cooldown", async () => {
    const discovery = ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"];
    for (const path of discovery) idp.respondInstead(path, { status: 503 });
    try {
      const gateway = await gatewayWith(HOUR_MS);
      const token = await idp.sign({
        iss: idp.issuer,
        sub: "alice",
        aud: `${gateway.url}/mcp`,
        exp: nowSec() + 600,
      });
      const from = discovery.map((path) => idp.requests(path));
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await initialize(gateway, token)).status);
      expect(statuses).toEqual([503, 503, 503, 503, 503]);
      expect(discovery.map((path, i) => idp.requests(path) - (from[i] ?? 0))).toEqual([1, 1]);
    } finally {
      for (const path of discovery) idp.respondInstead(path, undefined);
    }
  });

  it("that sends a key set larger than the cap: refused unread, 503", async () => {
    const gateway = await gatewayWith(HOUR_MS);
    const token = await idp.sign({
      iss: idp.issuer,
      sub: "alice",
      aud: `${gateway.url}/mcp`,
      exp: nowSec() + 600,
    });
    idp.respondInstead("/jwks", {
      status: 200,
      body: JSON.stringify({ keys: [], pad: "x".repeat(600 * 1024) }),
    });
    try {
      const response = await initialize(gateway, token);
      expect(response.status).toBe(503);
      expect((response.json as { error: { message: string } }).error.message).toContain(
        "more than the 524288 bytes it may",
      );
    } finally {
      idp.respondInstead("/jwks", undefined);
    }
  });

  it("that never answers: 503 once the deadline passes, not a request held forever", async () => {
    const gateway = await gatewayWith(HOUR_MS, 300);
    const token = await idp.sign({
      iss: idp.issuer,
      sub: "alice",
      aud: `${gateway.url}/mcp`,
      exp: nowSec() + 600,
    });
    idp.respondInstead("/jwks", "hang");
    try {
      const response = await initialize(gateway, token);
      expect(response.status).toBe(503);
      expect((response.json as { error: { message: string } }).error.message).toContain(
        "did not answer within 300 ms",
      );
    } finally {
      idp.respondInstead("/jwks", undefined);
    }
  });
});
