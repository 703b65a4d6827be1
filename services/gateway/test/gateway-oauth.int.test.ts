/**
 * The gateway as an OAuth 2.1 resource server, against a real identity provider (oidc-provider,
 * from the testkit) issuing real signed tokens bound to a resource: the protected resource
 * metadata, the 401 challenge, every attack on a token refused with the reason in the log and
 * never the token, a good token calling a tool through `/mcp` (with nothing of it reaching the
 * upstream server), the MCP SDK client's whole OAuth flow, roles from groups and scopes,
 * introspection of opaque tokens, and static tokens beside OAuth.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { principalOf, routeAccess } from "@toolbus/http-guard";
import {
  type IdentityProvider,
  startIdentityProvider,
  TestOAuthClient,
} from "@toolbus/testkit/identity-provider";
import { type HttpTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import type { FastifyPluginAsync } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { initializeBody, rawRequest } from "./support/http.js";
import { oauthConfig } from "./support/oauth-config.js";
import { mcpClient, Stack } from "./support/stack.js";

let idp: IdentityProvider;
let strangerIdp: IdentityProvider;
let upstream: HttpTestServer;
let stack: Stack;
let gateway: GatewayService;
let opaqueGateway: GatewayService;
let secretDir: string;

const STATIC_TOKEN = "ci-static-token-0123456789";
const ALICE_STATIC_TOKEN = "alice-static-token-0123456789";
const OPAQUE_ORIGIN = "http://opaque.toolbus.test";

/** A route only approvers and admins reach, saying who asked: what the principal looks like past the edge. */
const whoami: FastifyPluginAsync = async (app) => {
  app.get("/v1/test/whoami", routeAccess("approve"), async (request) => principalOf(request));
};

beforeAll(async () => {
  idp = await startIdentityProvider({
    accounts: {
      alice: { name: "Alice", groups: ["eng"] },
      rita: { name: "Rita", groups: ["reviewers"] },
      olga: { groups: ["ops"] },
    },
    opaqueResources: [`${OPAQUE_ORIGIN}/mcp`],
  });
  // Another issuer altogether: its tokens are real, for the same resources, and worth nothing here.
  strangerIdp = await startIdentityProvider();
  upstream = await startTestServer({ transport: "http", script: { tools: [{ name: "echo" }] } });
  stack = await Stack.start(
    "gw_oauth",
    `[mcp_servers.up]\nurl = ${JSON.stringify(upstream.url)}\ndefault_tools_approval_mode = "approve"\n`,
  );
  stack.defer(() => upstream.dispose());
  gateway = await stack.gateway({
    oauth: oauthConfig(idp.issuer),
    principals: [
      { name: "ci", role: "caller", token: STATIC_TOKEN },
      { name: "alice", role: "caller", token: ALICE_STATIC_TOKEN },
    ],
    plugins: [whoami],
  });
  secretDir = await mkdtemp(join(tmpdir(), "toolbus-oauth-secret-"));
  await writeFile(join(secretDir, "secret"), `${idp.introspectionClient.clientSecret}\n`);
  opaqueGateway = await stack.gateway({
    publicUrl: OPAQUE_ORIGIN,
    oauth: oauthConfig(idp.issuer, {
      introspection: { clientId: idp.introspectionClient.clientId, clientSecretEnv: "OAUTH_SECRET" },
    }),
    env: { OAUTH_SECRET_FILE: join(secretDir, "secret") },
  });
}, 180_000);

afterAll(async () => {
  await stack?.close();
  await idp?.stop();
  await strangerIdp?.stop();
  if (secretDir) await rm(secretDir, { recursive: true, force: true });
});

const mcpUrl = (service: GatewayService) => `${service.url}/mcp`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const nowSec = () => Math.floor(Date.now() / 1000);

/** The gateway's log lines since `from` that refused a request. */
function refusalsSince(from: number): Array<{ status: number; message: string; url: string }> {
  return stack.logs
    .slice(from)
    .filter((line) => line.includes('"msg":"refused a request"'))
    .map((line) => JSON.parse(line.slice(line.indexOf("{"))));
}

describe("protected resource metadata (RFC 9728)", () => {
  it("is served for /mcp and for the root, without a token, naming the issuer and the scopes", async () => {
    const [mcp, root] = await Promise.all([
      fetch(`${gateway.url}/.well-known/oauth-protected-resource/mcp`),
      fetch(`${gateway.url}/.well-known/oauth-protected-resource`),
    ]);
    const expected = (resource: string) => ({
      resource,
      authorization_servers: [idp.issuer],
      scopes_supported: ["mcp:tools"],
      bearer_methods_supported: ["header"],
      resource_name: "toolbus",
    });
    expect([mcp.status, await mcp.json(), root.status, await root.json()]).toEqual([
      200,
      expected(mcpUrl(gateway)),
      200,
      expected(gateway.url),
    ]);
  });

  it("names the resource as the client addressed it (lower case), or as public_url says", async () => {
    const port = new URL(gateway.url).port;
    const asLocalhost = await rawRequest(gateway.url, {
      method: "GET",
      path: "/.well-known/oauth-protected-resource/mcp",
      headers: { host: `LOCALHOST:${port}` },
    });
    const behindProxy = await fetch(`${opaqueGateway.url}/.well-known/oauth-protected-resource/mcp`);
    expect([
      (asLocalhost.json as { resource: string }).resource,
      ((await behindProxy.json()) as { resource: string }).resource,
    ]).toEqual([`http://localhost:${port}/mcp`, `${OPAQUE_ORIGIN}/mcp`]);
  });

  it("keeps the Host check: a Host that is not allowed gets 403", async () => {
    const response = await rawRequest(gateway.url, {
      method: "GET",
      path: "/.well-known/oauth-protected-resource/mcp",
      headers: { host: "evil.example.com" },
    });
    expect(response.status).toBe(403);
  });
});

describe("the 401 challenge", () => {
  it("points /mcp at its metadata and names the scopes, with no error when no token was sent", async () => {
    const response = await rawRequest(gateway.url, { body: initializeBody() });
    expect({ status: response.status, challenge: response.headers["www-authenticate"] }).toEqual({
      status: 401,
      challenge: `Bearer resource_metadata="${gateway.url}/.well-known/oauth-protected-resource/mcp", scope="mcp:tools"`,
    });
  });

  it("points the REST routes at the root's metadata", async () => {
    const response = await fetch(`${gateway.url}/v1/catalog`);
    expect([response.status, response.headers.get("www-authenticate")]).toEqual([
      401,
      `Bearer resource_metadata="${gateway.url}/.well-known/oauth-protected-resource", scope="mcp:tools"`,
    ]);
  });
});

describe("attacks on the access token, each refused with 401, the reason logged and never the token", () => {
  // Each runs once the gateway listens: the claims name its URLs.
  const mcp = () => mcpUrl(gateway);
  const attacks: Array<[string, () => Promise<string>, () => string]> = [
    [
      "a real token for another resource (wrong audience)",
      () => idp.accessToken({ login: "alice", resource: "http://127.0.0.1:1/mcp" }),
      () => `its audience is not ${mcp()}`,
    ],
    [
      "a real token for this server's root, presented at /mcp (wrong audience)",
      () => idp.accessToken({ login: "alice", resource: gateway.url }),
      () => `its audience is not ${mcp()}`,
    ],
    [
      "a token with no audience",
      () => idp.sign({ iss: idp.issuer, sub: "alice", exp: nowSec() + 600, iat: nowSec() }),
      () => "it names no audience",
    ],
    [
      "an expired token",
      () =>
        idp.sign({ iss: idp.issuer, sub: "alice", aud: mcp(), exp: nowSec() - 3600, iat: nowSec() - 7200 }),
      () => "it has expired",
    ],
    [
      "a token without an expiry",
      () => idp.sign({ iss: idp.issuer, sub: "alice", aud: mcp(), iat: nowSec() }),
      () => "it has no expiry (exp)",
    ],
    [
      "a real token of another issuer, for this very resource",
      () => strangerIdp.accessToken({ login: "alice", resource: mcp() }),
      () => `its issuer "${strangerIdp.issuer}" is not ${idp.issuer}`,
    ],
    [
      "a token signed by a key the issuer never published",
      () => idp.signWithUnknownKey({ iss: idp.issuer, sub: "alice", aud: mcp(), exp: nowSec() + 600 }),
      () => "it is signed with a key its issuer does not publish",
    ],
    [
      "alg none",
      async () => idp.forgeUnsigned({ iss: idp.issuer, sub: "olga", aud: mcp(), exp: nowSec() + 600 }),
      () => 'it is signed with "none"',
    ],
    [
      "HS256 keyed with the issuer's public key",
      () => idp.forgeHmacWithPublicKey({ iss: idp.issuer, sub: "olga", aud: mcp(), exp: nowSec() + 600 }),
      () => 'it is signed with "HS256"',
    ],
    [
      "a good token whose claims were changed (olga for alice)",
      async () => {
        const token = await idp.sign({ iss: idp.issuer, sub: "alice", aud: mcp(), exp: nowSec() + 600 });
        const [header, , signature] = token.split(".");
        const payload = Buffer.from(
          JSON.stringify({ iss: idp.issuer, sub: "olga", aud: mcp(), exp: nowSec() + 600 }),
        ).toString("base64url");
        return `${header}.${payload}.${signature}`;
      },
      () => "its signature does not verify",
    ],
  ];

  it.each(attacks)("refuses %s", async (_what, mint, reason) => {
    const token = await mint();
    const from = stack.logs.length;
    const response = await rawRequest(gateway.url, { headers: bearer(token), body: initializeBody() });
    const challenge = String(response.headers["www-authenticate"]);
    expect({ status: response.status, error: /error="([a-z_]+)"/.exec(challenge)?.[1] }).toEqual({
      status: 401,
      error: "invalid_token",
    });
    expect(challenge).toContain(
      `resource_metadata="${gateway.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(refusalsSince(from)).toEqual([
      expect.objectContaining({ status: 401, url: "/mcp", message: expect.stringContaining(reason()) }),
    ]);
    const logged = stack.logs.slice(from).join("\n");
    for (const part of token.split(".").filter((part) => part.length > 8)) expect(logged).not.toContain(part);
  });
});

describe("a good access token", () => {
  it("calls a tool through /mcp, and nothing of it reaches the upstream server", async () => {
    const token = await idp.accessToken({ login: "alice", resource: mcpUrl(gateway) });
    const client = await mcpClient(gateway, { headers: bearer(token) });
    try {
      const result = await client.callTool({ name: "up__echo", arguments: { said: "hello" } });
      expect(result.isError).toBeFalsy();
      expect(JSON.stringify(result.content)).toContain("hello");
    } finally {
      await client.close();
    }
    const seen = await upstream.requestHeaders();
    expect(seen.length).toBeGreaterThan(0);
    // The upstream server needs no token and gets none: neither the client's nor any other.
    expect(seen.filter((request) => request.headers.authorization !== undefined)).toEqual([]);
    expect(JSON.stringify(seen)).not.toContain(token.split(".")[2]);
    expect(JSON.stringify(seen)).not.toContain(STATIC_TOKEN);
  });

  it("stands for a principal named oauth:<sub> with its groups, scopes and a role from them", async () => {
    const rita = await idp.accessToken({ login: "rita", resource: gateway.url });
    const response = await fetch(`${gateway.url}/v1/test/whoami`, { headers: bearer(rita) });
    expect([response.status, await response.json()]).toEqual([
      200,
      {
        name: "oauth:rita",
        role: "approver",
        source: "oauth",
        subject: "rita",
        issuer: idp.issuer,
        displayName: "Rita",
        groups: ["reviewers"],
        scopes: ["mcp:tools"],
      },
    ]);
  });

  it("is good for the resource it names only, also once the gateway has seen it", async () => {
    const forRoot = await idp.accessToken({ login: "olga", resource: gateway.url });
    const root = await fetch(`${gateway.url}/v1/test/whoami`, { headers: bearer(forRoot) });
    const mcp = await rawRequest(gateway.url, { headers: bearer(forRoot), body: initializeBody() });
    expect([root.status, mcp.status]).toEqual([200, 401]);
  });

  it("maps groups to roles: a caller may call, not approve; an approver may approve, not call; an admin both", async () => {
    const tokens = {
      alice: await idp.accessToken({ login: "alice", resource: mcpUrl(gateway) }),
      rita: await idp.accessToken({ login: "rita", resource: mcpUrl(gateway) }),
      olga: await idp.accessToken({ login: "olga", resource: mcpUrl(gateway) }),
    };
    const call = async (token: string) =>
      (await rawRequest(gateway.url, { headers: bearer(token), body: initializeBody() })).status;
    const rootTokens = {
      alice: await idp.accessToken({ login: "alice", resource: gateway.url }),
      olga: await idp.accessToken({ login: "olga", resource: gateway.url }),
    };
    const approve = async (token: string) =>
      (await fetch(`${gateway.url}/v1/test/whoami`, { headers: bearer(token) })).status;
    expect({
      call: [await call(tokens.alice), await call(tokens.rita), await call(tokens.olga)],
      approve: [await approve(rootTokens.alice), await approve(rootTokens.olga)],
    }).toEqual({ call: [200, 403, 200], approve: [403, 200] });
  });

  it("says which scope would grant a role it lacks, when a scope can (insufficient_scope)", async () => {
    const alice = await idp.accessToken({ login: "alice", resource: gateway.url });
    const response = await fetch(`${gateway.url}/v1/test/whoami`, { headers: bearer(alice) });
    expect([response.status, response.headers.get("www-authenticate")]).toEqual([
      403,
      `Bearer resource_metadata="${gateway.url}/.well-known/oauth-protected-resource", scope="mcp:approve", error="insufficient_scope", error_description="this needs the role approver or admin"`,
    ]);
  });
});

describe("the MCP SDK client's own OAuth flow", () => {
  it("discovers the issuer from the 401, signs in with code and PKCE for this resource, then calls a tool", async () => {
    const auth = new TestOAuthClient(idp);
    const transport = () =>
      new StreamableHTTPClientTransport(new URL(mcpUrl(gateway)), { authProvider: auth });
    const first = new Client({ name: "oauth-test", version: "1.0.0" });
    const firstTransport = transport();
    await expect(first.connect(firstTransport)).rejects.toBeInstanceOf(UnauthorizedError);

    // What the SDK learned from the challenge and the metadata, as it sends the user to sign in.
    const sent = auth.authorizationUrl;
    expect(sent?.origin).toBe(idp.issuer);
    expect(Object.fromEntries(sent?.searchParams ?? [])).toMatchObject({
      client_id: idp.publicClient.clientId,
      response_type: "code",
      resource: mcpUrl(gateway),
      scope: "mcp:tools",
      code_challenge_method: "S256",
    });

    const { code } = await idp.authorize(sent as URL, "alice");
    await firstTransport.finishAuth(code);
    expect(auth.tokens()?.access_token).toBeDefined();

    const client = new Client({ name: "oauth-test", version: "1.0.0" });
    await client.connect(transport());
    try {
      const result = await client.callTool({ name: "up__echo", arguments: { said: "signed in" } });
      expect(JSON.stringify(result.content)).toContain("signed in");
    } finally {
      await client.close();
    }
  });
});

describe("opaque tokens, by introspection (RFC 7662)", () => {
  const opaqueMcp = `${OPAQUE_ORIGIN}/mcp`;

  it("calls a tool with an opaque token the issuer vouches for, for this resource", async () => {
    const token = await idp.accessToken({ login: "alice", resource: opaqueMcp });
    expect(token.split(".")).toHaveLength(1);
    const client = await mcpClient(opaqueGateway, { headers: bearer(token) });
    try {
      const result = await client.callTool({ name: "up__echo", arguments: { said: "opaque" } });
      expect(JSON.stringify(result.content)).toContain("opaque");
    } finally {
      await client.close();
    }
  });

  it("refuses an opaque token for another resource, an unknown one, and any at a gateway that does not introspect", async () => {
    const otherResource = await idp.accessToken({ login: "alice", resource: `${OPAQUE_ORIGIN}/other` });
    const forOpaque = await idp.accessToken({ login: "alice", resource: opaqueMcp });
    const from = stack.logs.length;
    const statuses = [
      (await rawRequest(opaqueGateway.url, { headers: bearer(otherResource), body: initializeBody() }))
        .status,
      (
        await rawRequest(opaqueGateway.url, {
          headers: bearer("not-a-token-anyone-issued"),
          body: initializeBody(),
        })
      ).status,
      (await rawRequest(gateway.url, { headers: bearer(forOpaque), body: initializeBody() })).status,
    ];
    expect(statuses).toEqual([401, 401, 401]);
    expect(refusalsSince(from).map((refusal) => refusal.message)).toEqual([
      `Unauthorized: the access token was refused: its audience is not ${opaqueMcp}; get a token for this resource (the resource parameter, RFC 8707)`,
      "Unauthorized: the access token was refused: the issuer says it is not active (expired, revoked or unknown)",
      "Unauthorized: the access token was refused: it is not a JWT, and this server does not introspect tokens (no [gateway.oauth] introspection client)",
    ]);
  });
});

describe("static tokens beside OAuth", () => {
  it("still serve, and a static principal never shares a session with an OAuth one of the same name", async () => {
    const staticClient = await mcpClient(gateway, { headers: bearer(STATIC_TOKEN) });
    try {
      expect((await staticClient.listTools()).tools.map((tool) => tool.name)).toContain("up__echo");
    } finally {
      await staticClient.close();
    }
    // oauth:alice opens a session; the static token named alice sends its id and finds nothing.
    const token = await idp.accessToken({ login: "alice", resource: mcpUrl(gateway) });
    const opened = await rawRequest(gateway.url, { headers: bearer(token), body: initializeBody() });
    const sessionId = String(opened.headers["mcp-session-id"]);
    const list = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    const headers = (with_: string) => ({
      ...bearer(with_),
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
    });
    const [asStaticAlice, asOAuthAlice] = [
      await rawRequest(gateway.url, { headers: headers(ALICE_STATIC_TOKEN), body: list }),
      await rawRequest(gateway.url, { headers: headers(token), body: list }),
    ];
    expect([opened.status, asStaticAlice.status, asOAuthAlice.status]).toEqual([200, 404, 200]);
  });
});
