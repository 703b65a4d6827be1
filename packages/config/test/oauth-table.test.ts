import { mkdtempSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ASYMMETRIC_JWS_ALGORITHMS, OAuthTable, resolveIntrospectionSecret } from "../src/oauth.js";
import { SignInTable } from "../src/signin.js";
import { TablesSchema } from "../src/tables.js";
import { parseToolbusToml } from "../src/toolbus-toml.js";
import { problemsOf } from "./problems-of.js";

const path = "/etc/toolbus/toolbus.toml";
const parse = (toml: string) => parseToolbusToml(toml, { path });
const problems = (toml: string) => problemsOf(() => parse(toml));

describe("[gateway.oauth]", () => {
  it("is off unless the table is there", () => {
    expect(parse("[gateway]\nport = 1").gateway.oauth).toBeUndefined();
  });

  it("takes an issuer alone, and the defaults for the rest", () => {
    expect(parse('[gateway.oauth]\nissuer = "https://idp.example.com/realms/toolbus"').gateway.oauth).toEqual(
      {
        issuer: "https://idp.example.com/realms/toolbus",
        scopesSupported: [],
        principalClaim: "sub",
        nameClaim: "name",
        groupsClaim: "groups",
        adminGroups: [],
        approverGroups: [],
        adminScopes: [],
        approverScopes: [],
        algorithms: [...ASYMMETRIC_JWS_ALGORITHMS],
      },
    );
  });

  it("reads every key", () => {
    const { gateway } = parse(`
[gateway]
public_url = "https://Toolbus.Example.com:443/"
[gateway.oauth]
issuer = "https://login.microsoftonline.com/tenant/v2.0"
audience = "api://toolbus"
scopes_supported = ["mcp.call"]
principal_claim = "oid"
name_claim = "preferred_username"
groups_claim = "realm_access.roles"
admin_groups = ["ops"]
approver_groups = ["reviewers"]
admin_scopes = ["mcp.admin"]
approver_scopes = ["mcp.approve"]
algorithms = ["RS256", "ES256"]
introspection_client_id = "toolbus"
introspection_client_secret_env = "TOOLBUS_OAUTH_SECRET"
introspection_endpoint = "https://login.example.com/introspect"
`);
    expect(gateway.publicUrl).toBe("https://toolbus.example.com");
    expect(gateway.oauth).toEqual({
      issuer: "https://login.microsoftonline.com/tenant/v2.0",
      audience: ["api://toolbus"],
      scopesSupported: ["mcp.call"],
      principalClaim: "oid",
      nameClaim: "preferred_username",
      groupsClaim: "realm_access.roles",
      adminGroups: ["ops"],
      approverGroups: ["reviewers"],
      adminScopes: ["mcp.admin"],
      approverScopes: ["mcp.approve"],
      algorithms: ["RS256", "ES256"],
      introspection: {
        clientId: "toolbus",
        clientSecretEnv: "TOOLBUS_OAUTH_SECRET",
        endpoint: "https://login.example.com/introspect",
      },
    });
  });

  it.each([
    ["[gateway.oauth]\nscopes_supported = []", "gateway.oauth.issuer", "expected a string, got nothing"],
    [
      '[gateway.oauth]\nissuer = "idp.example.com"',
      "gateway.oauth.issuer",
      "must be an absolute URL such as https://idp.example.com/realms/toolbus",
    ],
    [
      '[gateway.oauth]\nissuer = "http://idp.example.com"',
      "gateway.oauth.issuer",
      "must use https (http only on loopback, for a development identity provider)",
    ],
    [
      '[gateway.oauth]\nissuer = "https://idp.example.com/?tenant=a"',
      "gateway.oauth.issuer",
      "must have no query or fragment",
    ],
    [
      '[gateway.oauth]\nissuer = "https://idp.example.com"\nalgorithms = ["HS256"]',
      "gateway.oauth.algorithms[0]",
      `"HS256" is not allowed (an HMAC needs a shared secret, and one checked with the issuer's public key is a signature anyone can make); use some of ${ASYMMETRIC_JWS_ALGORITHMS.join(", ")}`,
    ],
    [
      '[gateway.oauth]\nissuer = "https://idp.example.com"\nalgorithms = ["RS256", "none"]',
      "gateway.oauth.algorithms[1]",
      `"none" is not allowed (an unsigned token proves nothing); use some of ${ASYMMETRIC_JWS_ALGORITHMS.join(", ")}`,
    ],
    [
      '[gateway.oauth]\nissuer = "https://idp.example.com"\nintrospection_client_id = "toolbus"',
      "gateway.oauth.introspection_client_secret_env",
      "introspection needs both introspection_client_id and introspection_client_secret_env (the gateway's own client at the issuer); set both, or neither to accept JWTs only",
    ],
    [
      '[gateway.oauth]\nissuer = "https://idp.example.com"\nclient_id = "toolbus"',
      "gateway.oauth",
      "unknown key `client_id`",
    ],
    [
      '[gateway]\npublic_url = "https://toolbus.example.com/mcp"',
      "gateway.public_url",
      "must be an origin only (scheme, host, port): no path, query, fragment or user; toolbus serves /mcp and its other routes at the root",
    ],
    [
      '[gateway]\nallowed_hosts = ["*"]\n[gateway.oauth]\nissuer = "https://idp.example.com"',
      "gateway.oauth",
      'with allowed_hosts = ["*"] any Host header would name the resource a token must be for; set [gateway] public_url (the URL clients reach the gateway at) or [gateway.oauth] audience',
    ],
  ])("refuses %j", (toml, at, message) => {
    expect(problems(toml)).toContainEqual({ at, message });
  });

  it('takes allowed_hosts = ["*"] once the resource is named otherwise', () => {
    for (const extra of ['public_url = "https://toolbus.example.com"', ""]) {
      const audience = extra === "" ? 'audience = "api://toolbus"\n' : "";
      const { gateway } = parse(
        `[gateway]\nallowed_hosts = ["*"]\n${extra}\n[gateway.oauth]\nissuer = "https://idp.example.com"\n${audience}`,
      );
      expect(gateway.oauth?.issuer).toBe("https://idp.example.com");
    }
  });

  it("takes an http issuer on loopback, for a development identity provider", () => {
    expect(OAuthTable.parse({ issuer: "http://127.0.0.1:4444" }).issuer).toBe("http://127.0.0.1:4444");
  });
});

describe("the introspection client's secret", () => {
  const introspection = { clientId: "toolbus", clientSecretEnv: "OAUTH_SECRET" };

  it("is read from the variable, or from the file its _FILE variant names", () => {
    const dir = mkdtempSync(join(tmpdir(), "oauth-secret-"));
    writeFileSync(join(dir, "secret"), "from-the-file\n");
    expect(resolveIntrospectionSecret(introspection, { OAUTH_SECRET: "s3cret" })).toEqual({
      ok: true,
      secret: "s3cret",
    });
    expect(resolveIntrospectionSecret(introspection, { OAUTH_SECRET_FILE: join(dir, "secret") })).toEqual({
      ok: true,
      secret: "from-the-file",
    });
  });

  it("is a clear error when missing, never quoting a value", () => {
    expect(resolveIntrospectionSecret(introspection, {})).toEqual({
      ok: false,
      message:
        "Environment variable OAUTH_SECRET (gateway.oauth.introspection_client_secret_env) is not set; set it (or OAUTH_SECRET_FILE to a file holding it) to the secret of the client toolbus, or remove the introspection keys to accept JWTs only",
    });
    const both = resolveIntrospectionSecret(introspection, {
      OAUTH_SECRET: "leaked?",
      OAUTH_SECRET_FILE: "/nowhere",
    });
    expect(both.ok).toBe(false);
    expect(JSON.stringify(both)).not.toContain("leaked?");
  });
});

describe("the README", () => {
  it("documents every [gateway], [gateway.oauth] and [gateway.signin] key in its toolbus.toml", async () => {
    const readme = await readFile(new URL("../README.md", import.meta.url), "utf8");
    const example = /```toml\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const gatewayKeys = (table: string) =>
      [...example.matchAll(new RegExp(`^\\[${table}\\][^\\n]*\\n([\\s\\S]*?)(?=^\\[)`, "gm"))]
        .flatMap((match) => [...match[1]!.matchAll(/^#? ?([a-z_]+) = /gm)].map((key) => key[1]))
        .sort();
    const gatewayTable = TablesSchema.shape.gateway.unwrap().in.shape;
    expect(gatewayKeys("gateway\\.oauth")).toEqual(Object.keys(OAuthTable.in.shape).sort());
    expect(gatewayKeys("gateway\\.signin")).toEqual(Object.keys(SignInTable.in.shape).sort());
    expect(gatewayKeys("gateway")).toEqual(
      Object.keys(gatewayTable)
        .filter((key) => key !== "oauth" && key !== "signin")
        .sort(),
    );
  });
});
