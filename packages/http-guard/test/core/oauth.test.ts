/**
 * The pure OAuth rules of the edge: canonical resource URIs, the Bearer challenge, the checks
 * before any key is fetched, what an introspection answer must say, and how claims become a
 * principal and a role. Tokens here are real JWS, signed with keys made for the test.
 */
import { ASYMMETRIC_JWS_ALGORITHMS } from "@toolbus/config";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  checkIntrospection,
  claimAt,
  looksLikeJwt,
  precheckJwt,
  principalFromClaims,
  roleOf,
  scopesOf,
  verifyRefusal,
} from "../../src/core/access-token.js";
import { bearerChallenge } from "../../src/core/bearer-challenge.js";
import { acceptedAudiences, forbiddenChallenge } from "../../src/core/oauth-edge.js";
import {
  canonicalResource,
  metadataUrl,
  requestOrigin,
  resourcePathOf,
} from "../../src/core/resource-uri.js";

const ISSUER = "https://idp.example.com/realms/toolbus";
const mapping = {
  issuer: ISSUER,
  principalClaim: "sub",
  nameClaim: "name",
  groupsClaim: "groups",
  adminGroups: ["ops"],
  approverGroups: ["reviewers"],
  adminScopes: ["mcp:admin"],
  approverScopes: ["mcp:approve"],
};

describe("canonical resource URIs (RFC 8707 §2)", () => {
  it.each<[string | undefined, string | undefined, string | undefined]>([
    [undefined, "localhost:8080", "http://localhost:8080"],
    [undefined, "LOCALHOST:8080", "http://localhost:8080"],
    [undefined, "Toolbus.Example.com:80", "http://toolbus.example.com"],
    [undefined, "[::1]:9000", "http://[::1]:9000"],
    [undefined, "evil.example.com/#frag", undefined],
    [undefined, "a@b", undefined],
    [undefined, undefined, undefined],
    ["https://toolbus.example.com", "10.0.0.7:8080", "https://toolbus.example.com"],
  ])("public_url %s, Host %s → %s", (publicUrl, host, origin) => {
    expect(requestOrigin(publicUrl, host)).toBe(origin);
  });

  it("names /mcp as a resource of its own and everything else as the root", () => {
    const paths = ["/mcp"];
    expect(
      ["/mcp", "/mcp?x=1", "/mcp/", "/v1/calls", "/mcpx", "/"].map((p) => resourcePathOf(p, paths)),
    ).toEqual(["/mcp", "/mcp", "/mcp", "", "", ""]);
    expect(canonicalResource("https://toolbus.example.com", "/mcp")).toBe("https://toolbus.example.com/mcp");
    expect(canonicalResource("https://toolbus.example.com", "")).toBe("https://toolbus.example.com");
    expect(metadataUrl("https://toolbus.example.com", "/mcp")).toBe(
      "https://toolbus.example.com/.well-known/oauth-protected-resource/mcp",
    );
  });

  it("accepts the configured audiences, else the resource's own URI", () => {
    expect(acceptedAudiences({}, "http://localhost:8080", "/mcp")).toEqual(["http://localhost:8080/mcp"]);
    expect(acceptedAudiences({ audience: ["api://toolbus"] }, "http://localhost:8080", "/mcp")).toEqual([
      "api://toolbus",
    ]);
    expect(acceptedAudiences({}, undefined, "/mcp")).toEqual([]);
  });
});

describe("the Bearer challenge", () => {
  it("names the metadata and the scopes, and no error when no token was sent", () => {
    expect(
      bearerChallenge({
        resourceMetadata: "http://localhost:8080/.well-known/oauth-protected-resource/mcp",
        scopes: ["mcp:tools", "openid"],
      }),
    ).toBe(
      'Bearer resource_metadata="http://localhost:8080/.well-known/oauth-protected-resource/mcp", scope="mcp:tools openid"',
    );
  });

  it("escapes quotes and drops line breaks, so a reason cannot forge a header", () => {
    expect(
      bearerChallenge({ error: "invalid_token", errorDescription: 'its issuer "x"\r\nSet-Cookie: a=b' }),
    ).toBe('Bearer error="invalid_token", error_description="its issuer \\"x\\"??Set-Cookie: a=b"');
  });

  it("says which scopes would grant a role only when scopes grant it", () => {
    expect(
      forbiddenChallenge({ adminScopes: ["mcp:admin"], approverScopes: ["mcp:approve"] }, "approve"),
    ).toEqual({
      scopes: ["mcp:approve", "mcp:admin"],
      error: "insufficient_scope",
      errorDescription: "this needs the role approver or admin",
    });
    expect(forbiddenChallenge({ adminScopes: [], approverScopes: [] }, "approve")).toBeUndefined();
  });
});

describe("the checks before any key is fetched", () => {
  const expected = { issuer: ISSUER, algorithms: [...ASYMMETRIC_JWS_ALGORITHMS] };

  it("passes a well-formed token of the issuer, signed with an allowed algorithm", async () => {
    const { privateKey } = await generateKeyPair("ES256");
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer(ISSUER)
      .sign(privateKey);
    expect(looksLikeJwt(token)).toBe(true);
    expect(precheckJwt(token, expected)).toEqual({ ok: true });
  });

  it("refuses alg none, an HMAC and an algorithm left out of the list, before anything is fetched", async () => {
    const unsigned = new UnsecuredJWT({ iss: ISSUER }).encode();
    const hmac = await new SignJWT({})
      .setProtectedHeader({ alg: "HS256" })
      .setIssuer(ISSUER)
      .sign(new TextEncoder().encode("a shared secret of thirty-two bytes!"));
    const { privateKey } = await generateKeyPair("RS256");
    const rsa = await new SignJWT({}).setProtectedHeader({ alg: "RS256" }).setIssuer(ISSUER).sign(privateKey);
    expect([
      precheckJwt(unsigned, expected),
      precheckJwt(hmac, expected),
      precheckJwt(rsa, { issuer: ISSUER, algorithms: ["ES256"] }),
    ]).toEqual([
      { ok: false, reason: expect.stringContaining('it is signed with "none"') },
      { ok: false, reason: expect.stringContaining('it is signed with "HS256"') },
      { ok: false, reason: 'it is signed with "RS256", which this server does not accept (ES256)' },
    ]);
  });

  it("refuses another issuer, and what is not a JWT", async () => {
    const { privateKey } = await generateKeyPair("ES256");
    const other = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256" })
      .setIssuer("https://evil.example.com")
      .sign(privateKey);
    expect(precheckJwt(other, expected)).toEqual({
      ok: false,
      reason: `its issuer "https://evil.example.com" is not ${ISSUER}; get a token from that issuer`,
    });
    expect(precheckJwt("abc.def.ghi", expected)).toEqual({
      ok: false,
      reason: "it is not a well-formed JWT",
    });
    expect(looksLikeJwt("opaque-token-value")).toBe(false);
  });

  it("says why jose refused, and calls a failure to reach the keys unavailable", () => {
    const audiences = ["http://localhost:8080/mcp"];
    expect(
      verifyRefusal({ code: "ERR_JWT_CLAIM_VALIDATION_FAILED", claim: "aud", reason: "missing" }, audiences),
    ).toEqual({
      ok: false,
      reason:
        "it names no audience; get a token for http://localhost:8080/mcp (the resource parameter, RFC 8707)",
    });
    expect(verifyRefusal({ code: "ERR_JWKS_NO_MATCHING_KEY" }, audiences)).toEqual({
      ok: false,
      reason: "it is signed with a key its issuer does not publish",
    });
    expect(verifyRefusal({ code: "ERR_JWKS_TIMEOUT" }, audiences)).toBe("unavailable");
    expect(verifyRefusal({}, audiences)).toBe("unavailable");
  });

  it("keeps the key material out of the refusal", async () => {
    const { publicKey } = await generateKeyPair("RS256");
    const jwk = await exportJWK(publicKey);
    const refusal = precheckJwt("x.y.z", expected);
    expect(JSON.stringify(refusal)).not.toContain(jwk.n);
  });
});

describe("an introspection answer", () => {
  const expected = { issuer: ISSUER, audiences: ["http://localhost:8080/mcp"], nowSec: 1_000_000 };
  const good = {
    active: true,
    token_type: "Bearer",
    exp: 1_000_600,
    iss: ISSUER,
    aud: "http://localhost:8080/mcp",
  };

  it("vouches for an active bearer token for this resource", () => {
    expect(checkIntrospection(good, expected)).toEqual({ ok: true });
    expect(checkIntrospection({ ...good, aud: ["other", "http://localhost:8080/mcp"] }, expected)).toEqual({
      ok: true,
    });
  });

  it.each<[string, Record<string, unknown>, string]>([
    ["inactive", { active: false }, "the issuer says it is not active (expired, revoked or unknown)"],
    [
      "a refresh token",
      { token_type: "refresh_token" },
      "the issuer says it is a refresh_token, not a bearer access token",
    ],
    ["no expiry", { exp: undefined }, "it has no expiry (exp)"],
    ["expired past the skew", { exp: 1_000_000 - 31 }, "it has expired; get a new one"],
    ["another issuer", { iss: "https://evil.example.com" }, "its issuer is not the one this server trusts"],
    [
      "no audience",
      { aud: undefined },
      "it names no audience; get a token for http://localhost:8080/mcp (the resource parameter, RFC 8707)",
    ],
    [
      "another audience",
      { aud: "http://localhost:8080" },
      "its audience is not http://localhost:8080/mcp; get a token for this resource (the resource parameter, RFC 8707)",
    ],
  ])("refuses %s", (_what, change, reason) => {
    expect(checkIntrospection({ ...good, ...change }, expected)).toEqual({ ok: false, reason });
  });
});

describe("claims to a principal", () => {
  it("names the principal oauth:<sub>, with its name, groups, scopes and issuer", () => {
    expect(
      principalFromClaims(
        {
          sub: "alice",
          name: "Alice A.",
          groups: ["eng", 7, "reviewers"],
          scope: "openid mcp:tools",
          scp: ["mcp:tools"],
        },
        mapping,
      ),
    ).toEqual({
      ok: true,
      principal: {
        name: "oauth:alice",
        role: "approver",
        source: "oauth",
        subject: "alice",
        issuer: ISSUER,
        displayName: "Alice A.",
        groups: ["eng", "reviewers"],
        scopes: ["openid", "mcp:tools"],
      },
    });
  });

  it("gives admin before approver before caller, by groups or scopes", () => {
    expect(roleOf(["reviewers", "ops"], [], mapping)).toBe("admin");
    expect(roleOf([], ["mcp:approve"], mapping)).toBe("approver");
    expect(roleOf(["eng"], ["mcp:tools"], mapping)).toBe("caller");
  });

  it("reads a dotted path when no claim has the name (Keycloak's realm_access.roles), the name first", () => {
    const claims = { realm_access: { roles: ["ops"] }, "https://example.com/groups": ["x"] };
    expect(claimAt(claims, "realm_access.roles")).toEqual(["ops"]);
    expect(claimAt(claims, "https://example.com/groups")).toEqual(["x"]);
    expect(claimAt(claims, "realm_access.missing.deeper")).toBeUndefined();
    expect(scopesOf({ scp: "a b  c" })).toEqual(["a", "b", "c"]);
  });

  it("refuses a token that names nobody, or names too much", () => {
    expect(principalFromClaims({}, mapping)).toEqual({
      ok: false,
      reason: "it has no sub claim naming who it is for",
    });
    expect(principalFromClaims({ sub: "a\nb" }, mapping)).toMatchObject({ ok: false });
    expect(principalFromClaims({ sub: "x".repeat(201) }, mapping)).toMatchObject({ ok: false });
    expect(
      principalFromClaims({ sub: "a", groups: Array.from({ length: 257 }, (_, i) => `g${i}`) }, mapping),
    ).toEqual({ ok: false, reason: "it lists more than 256 groups" });
  });
});
