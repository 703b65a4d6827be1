/**
 * Views (`[views.<name>]` at `/mcp/<name>`) and tool scopes, against a real identity provider
 * (oidc-provider from the testkit) issuing real signed tokens bound to each view's URL: the
 * listed set is the callable set (tools, resources, prompts), a view is for its groups, a token
 * for one view is refused on another, a session of one view is unknown on another, and a tool
 * that requires a scope answers 403 with the step-up challenge, which the MCP SDK client follows
 * by signing in again for the scope, then calls the tool.
 */
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type IdentityProvider,
  startIdentityProvider,
  TestOAuthClient,
} from "@toolbus/testkit/identity-provider";
import { type HttpTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { initializeBody, rawRequest } from "./support/http.js";
import { oauthConfig } from "./support/oauth-config.js";
import { Stack } from "./support/stack.js";

let idp: IdentityProvider;
let docs: HttpTestServer;
let admin: HttpTestServer;
let stack: Stack;
let gateway: GatewayService;

beforeAll(async () => {
  idp = await startIdentityProvider({
    accounts: {
      alice: { name: "Alice", groups: ["eng"] },
      sam: { name: "Sam", groups: ["sales"] },
    },
    scopes: ["mcp:tools", "docs:write"],
  });
  docs = await startTestServer({
    transport: "http",
    script: {
      tools: [{ name: "read_page" }, { name: "write_page" }],
      resources: [{ uri: "docs://home", name: "home", text: "welcome" }],
      prompts: [{ name: "summarize", text: "summarize the docs" }],
    },
  });
  admin = await startTestServer({
    transport: "http",
    script: {
      tools: [{ name: "drop_database" }],
      resources: [{ uri: "admin://secrets", name: "secrets", text: "the root password" }],
      prompts: [{ name: "escalate", text: "become root" }],
    },
  });
  stack = await Stack.start(
    "gw_views",
    [
      `[mcp_servers.docs]\nurl = ${JSON.stringify(docs.url)}\ndefault_tools_approval_mode = "approve"\n`,
      `[mcp_servers.admin]\nurl = ${JSON.stringify(admin.url)}\ndefault_tools_approval_mode = "approve"\n`,
    ].join("\n"),
  );
  stack.defer(() => docs.dispose());
  stack.defer(() => admin.dispose());
  gateway = await stack.gateway({
    oauth: oauthConfig(idp.issuer),
    views: [
      { name: "docs", servers: ["docs"], tools: ["*"], groups: ["eng"] },
      { name: "readers", servers: ["doc*"], tools: ["read_*"], groups: [] },
    ],
    toolScopes: { docs: { write_page: ["docs:write"] } },
  });
}, 180_000);

afterAll(async () => {
  await stack?.close();
  await idp?.stop();
});

const viewUrl = (view: string) => `${gateway.url}/mcp/${view}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function viewClient(view: string, token: string): Promise<Client> {
  const client = new Client({ name: "views-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(view === "" ? `${gateway.url}/mcp` : viewUrl(view)), {
      requestInit: { headers: bearer(token) },
    }),
  );
  return client;
}

describe("a view lists, and serves, only its part of the catalog", () => {
  it("lists its tools, resources and prompts only; /mcp lists everything", async () => {
    const inView = await viewClient(
      "docs",
      await idp.accessToken({ login: "alice", resource: viewUrl("docs") }),
    );
    const whole = await viewClient(
      "",
      await idp.accessToken({ login: "alice", resource: `${gateway.url}/mcp` }),
    );
    try {
      const names = async (client: Client) => ({
        tools: (await client.listTools()).tools.map((tool) => tool.name).sort(),
        resources: (await client.listResources()).resources.map((resource) => resource.uri).sort(),
        prompts: (await client.listPrompts()).prompts.map((prompt) => prompt.name).sort(),
      });
      expect(await names(inView)).toEqual({
        tools: ["docs__read_page", "docs__write_page"],
        resources: ["docs://home"],
        prompts: ["docs__summarize"],
      });
      const everything = await names(whole);
      expect(everything.tools).toEqual(
        expect.arrayContaining(["admin__drop_database", "docs__read_page", "docs__write_page"]),
      );
      expect(everything.resources).toEqual(["admin://secrets", "docs://home"]);
    } finally {
      await inView.close();
      await whole.close();
    }
  });

  it("refuses what it does not list exactly as what does not exist: tools, resources, prompts", async () => {
    const token = await idp.accessToken({ login: "alice", resource: viewUrl("docs") });
    const client = await viewClient("docs", token);
    try {
      const outside = await client
        .callTool({ name: "admin__drop_database", arguments: {} })
        .catch((e: Error) => e);
      const nowhere = await client
        .callTool({ name: "nobody__nothing", arguments: {} })
        .catch((e: Error) => e);
      const shape = (error: unknown) =>
        String((error as Error).message).replace(/admin__drop_database|nobody__nothing/, "<name>");
      expect(shape(outside)).toBe(shape(nowhere));
      expect(shape(outside)).toMatch(/Unknown tool: <name>/);
      await expect(client.readResource({ uri: "admin://secrets" })).rejects.toThrow(/admin:\/\/secrets/);
      await expect(client.getPrompt({ name: "admin__escalate" })).rejects.toThrow(
        /Unknown prompt: admin__escalate/,
      );
      // Nothing reached the server the view leaves out.
      expect(await admin.calls()).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it("filters tools by glob: the readers view has read_page and nothing else", async () => {
    const client = await viewClient(
      "readers",
      await idp.accessToken({ login: "sam", resource: viewUrl("readers") }),
    );
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["docs__read_page"]);
      await expect(client.callTool({ name: "docs__write_page", arguments: {} })).rejects.toThrow(
        /Unknown tool/,
      );
      // A view that leaves a server out offers no resource tools (they read every server).
      await expect(client.callTool({ name: "list_mcp_resources", arguments: {} })).rejects.toThrow(
        /Unknown tool/,
      );
    } finally {
      await client.close();
    }
  });
});

describe("who may use a view, and with what", () => {
  it("refuses a principal outside the view's groups with 403", async () => {
    const token = await idp.accessToken({ login: "sam", resource: viewUrl("docs") });
    const response = await rawRequest(gateway.url, {
      path: "/mcp/docs",
      headers: bearer(token),
      body: initializeBody(),
    });
    expect(response.status).toBe(403);
    expect(JSON.stringify(response.json)).toMatch(
      /\/mcp\/docs is for members of its groups, and oauth:sam is not one/,
    );
  });

  it("refuses a token for one view on another (its audience), and for /mcp on a view", async () => {
    const forReaders = await idp.accessToken({ login: "alice", resource: viewUrl("readers") });
    const forMcp = await idp.accessToken({ login: "alice", resource: `${gateway.url}/mcp` });
    const statuses = await Promise.all(
      [forReaders, forMcp].map(
        async (token) =>
          (
            await rawRequest(gateway.url, {
              path: "/mcp/docs",
              headers: bearer(token),
              body: initializeBody(),
            })
          ).status,
      ),
    );
    expect(statuses).toEqual([401, 401]);
  });

  it("does not serve one view's session on another", async () => {
    const docsToken = await idp.accessToken({ login: "alice", resource: viewUrl("docs") });
    const opened = await rawRequest(gateway.url, {
      path: "/mcp/docs",
      headers: bearer(docsToken),
      body: initializeBody(),
    });
    const sessionId = opened.headers["mcp-session-id"] as string;
    expect(sessionId).toBeDefined();
    const readersToken = await idp.accessToken({ login: "alice", resource: viewUrl("readers") });
    const elsewhere = await rawRequest(gateway.url, {
      path: "/mcp/readers",
      headers: { ...bearer(readersToken), "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    expect(elsewhere.status).toBe(404);
  });

  it("answers an unknown view 404, naming the endpoints there are", async () => {
    const token = await idp.accessToken({ login: "alice", resource: `${gateway.url}/mcp` });
    const response = await rawRequest(gateway.url, {
      path: "/mcp/nope",
      headers: bearer(token),
      body: initializeBody(),
    });
    expect(response.status).toBe(404);
    expect(JSON.stringify(response.json)).toContain("the MCP endpoints are /mcp, /mcp/docs, /mcp/readers");
  });

  it("serves each view's protected resource metadata, naming the view's own URL", async () => {
    const response = await fetch(`${gateway.url}/.well-known/oauth-protected-resource/mcp/docs`);
    expect(((await response.json()) as { resource: string }).resource).toBe(viewUrl("docs"));
  });
});

describe("a tool that requires a scope", () => {
  it("answers 403 with the step-up challenge to a token without it", async () => {
    const client = await viewClient(
      "docs",
      await idp.accessToken({ login: "alice", resource: viewUrl("docs"), scope: "mcp:tools" }),
    );
    try {
      const fromRead = await client.callTool({ name: "docs__read_page", arguments: {} });
      expect(fromRead.isError ?? false).toBe(false);
    } finally {
      await client.close();
    }
    const token = await idp.accessToken({ login: "alice", resource: viewUrl("docs"), scope: "mcp:tools" });
    const opened = await rawRequest(gateway.url, {
      path: "/mcp/docs",
      headers: bearer(token),
      body: initializeBody(),
    });
    const sessionId = opened.headers["mcp-session-id"] as string;
    const refused = await rawRequest(gateway.url, {
      path: "/mcp/docs",
      headers: { ...bearer(token), "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 3,
        method: "tools/call",
        params: { name: "docs__write_page", arguments: {} },
      }),
    });
    expect({ status: refused.status, challenge: refused.headers["www-authenticate"] }).toEqual({
      status: 403,
      challenge: `Bearer resource_metadata="${gateway.url}/.well-known/oauth-protected-resource/mcp/docs", scope="docs:write", error="insufficient_scope", error_description="docs__write_page requires the scope(s) docs:write"`,
    });
    expect((await docs.calls()).filter((call) => call.tool === "write_page")).toEqual([]);
  });

  it("the SDK client signs in, gets the step-up challenge, signs in again with the scope and calls the tool", async () => {
    const auth = new TestOAuthClient(idp);
    const transport = () =>
      new StreamableHTTPClientTransport(new URL(viewUrl("docs")), { authProvider: auth });
    const first = transport();
    await expect(new Client({ name: "views-test", version: "1.0.0" }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    await first.finishAuth((await idp.authorize(auth.authorizationUrl as URL, "alice")).code);
    const client = new Client({ name: "views-test", version: "1.0.0" });
    const signedIn = transport();
    await client.connect(signedIn);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
        "docs__read_page",
        "docs__write_page",
      ]);
      // The first sign-in asked for the scopes the metadata names; the tool needs one more.
      const stepUp = await client
        .callTool({ name: "docs__write_page", arguments: {} })
        .catch((error: unknown) => error);
      expect(stepUp).toBeInstanceOf(Error);
      const asked = auth.authorizationUrl as URL;
      expect(asked.searchParams.get("scope")).toContain("docs:write");
      expect(asked.searchParams.get("resource")).toBe(viewUrl("docs"));
      await signedIn.finishAuth((await idp.authorize(asked, "alice")).code);
      const written = await client.callTool({ name: "docs__write_page", arguments: {} });
      expect(written.isError ?? false).toBe(false);
      expect((await docs.calls()).filter((call) => call.tool === "write_page")).toHaveLength(1);
    } finally {
      await client.close();
    }
  });
});
