/**
 * Where the gateway sends a `resources/read`, seen from an MCP client, with the real catalog and
 * scripted MCP test servers whose read logs show which server saw which read: the one server
 * that lists the URI or whose template matches it, and none when two or none claim it.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RESOURCE_ROUTING_LIMITS } from "../src/core/resource-routing.js";
import type { GatewayService } from "../src/gateway-service.js";
import { mcpClient, Stack, tomlFor } from "./support/stack.js";

const { templatesPerServer, templateLength, uriLength } = RESOURCE_ROUTING_LIMITS;

/**
 * Templates a backtracking matcher takes exponential time on for a URI they do not match: as
 * many as a server may list, the longest as long as one may be, all different.
 */
const HOSTILE_TEMPLATES = Array.from(
  { length: templatesPerServer },
  (_, i) => `x://${(i % 2 ? "{+a}" : "{+b}").repeat(Math.floor((templateLength - 5) / 4) - (i >> 1))}z`,
);
/** As long a URI as a read may name, which the hostile template does not match (no final z). */
const HOSTILE_URI = `x://${"a/".repeat((uriLength - 4) / 2)}`;

let stack: Stack;
let gateway: GatewayService;
let alpha: StdioTestServer;
let beta: StdioTestServer;
let hostile: StdioTestServer;
const clients: Client[] = [];

async function client(): Promise<Client> {
  const connected = await mcpClient(gateway);
  clients.push(connected);
  return connected;
}

/** The URIs each server has been asked to read. */
async function readsSeen(): Promise<{ alpha: string[]; beta: string[]; hostile: string[] }> {
  const uris = async (server: StdioTestServer) => (await server.reads()).map((read) => read.uri);
  return { alpha: await uris(alpha), beta: await uris(beta), hostile: await uris(hostile) };
}

async function refusal(read: Promise<unknown>): Promise<{ code: number; message: string }> {
  const error = await read.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return { code: (error as McpError).code, message: (error as McpError).message };
}

beforeAll(async () => {
  alpha = await startTestServer({
    transport: "stdio",
    script: {
      resources: [
        { uri: "shared://readme", name: "readme", text: "alpha's readme" },
        { uri: "alpha://only", name: "only", text: "only alpha" },
        { uri: "alpha://page/7", name: "page 7", text: "seven", unlisted: true },
      ],
      resourceTemplates: [
        { uriTemplate: "alpha://page/{n}", name: "page" },
        { uriTemplate: "both://{x}", name: "both" },
      ],
    },
  });
  beta = await startTestServer({
    transport: "stdio",
    script: {
      resources: [{ uri: "shared://readme", name: "readme", text: "beta's readme" }],
      resourceTemplates: [{ uriTemplate: "both://{+y}", name: "both" }],
    },
  });
  hostile = await startTestServer({
    transport: "stdio",
    script: {
      resources: [],
      resourceTemplates: [
        ...HOSTILE_TEMPLATES.map((uriTemplate, i) => ({ uriTemplate, name: `hostile ${i}` })),
        // Past the cap on templates per server, and past the cap on length: neither is kept.
        { uriTemplate: "extra://{x}", name: "one too many" },
        { uriTemplate: `long://${"{+a}".repeat(templateLength / 4)}`, name: "too long" },
      ],
    },
  });
  stack = await Stack.start(
    "gw_resource_routing",
    tomlFor([
      { name: "alpha", command: alpha.command, args: alpha.args },
      { name: "beta", command: beta.command, args: beta.args },
      { name: "hostile", command: hostile.command, args: hostile.args },
    ]),
    ["catalog"],
  );
  stack.defer(() => alpha.dispose());
  stack.defer(() => beta.dispose());
  stack.defer(() => hostile.dispose());
  gateway = await stack.gateway();
}, 90_000);

afterAll(async () => {
  for (const connected of clients) await connected.close().catch(() => undefined);
  await stack?.close();
});

describe("resources/read", () => {
  it("goes to the one server that lists the URI", async () => {
    const read = await (await client()).readResource({ uri: "alpha://only" });
    expect(read.contents).toEqual([{ uri: "alpha://only", text: "only alpha" }]);
    const seen = await readsSeen();
    expect(seen.alpha).toContain("alpha://only");
    expect([...seen.beta, ...seen.hostile]).not.toContain("alpha://only");
  });

  it("goes to the one server whose template matches a URI no server lists", async () => {
    const read = await (await client()).readResource({ uri: "alpha://page/7" });
    expect(read.contents).toEqual([{ uri: "alpha://page/7", text: "seven" }]);
    const seen = await readsSeen();
    expect(seen.alpha).toContain("alpha://page/7");
    expect([...seen.beta, ...seen.hostile]).not.toContain("alpha://page/7");
  });

  it("refuses a URI two servers list, naming both, and neither is asked", async () => {
    expect(await refusal((await client()).readResource({ uri: "shared://readme" }))).toEqual({
      code: -32602,
      message:
        "MCP error -32602: Resource shared://readme is listed by more than one server (alpha, beta); toolbus cannot tell which to read. Read it with the read_mcp_resource tool, naming the server",
    });
    const seen = await readsSeen();
    expect([...seen.alpha, ...seen.beta, ...seen.hostile]).not.toContain("shared://readme");
  });

  it("refuses a URI templates of two servers match, naming both, and neither is asked", async () => {
    expect(await refusal((await client()).readResource({ uri: "both://x" }))).toEqual({
      code: -32602,
      message:
        "MCP error -32602: Resource both://x matches resource templates of more than one server: alpha (both://{x}), beta (both://{+y}); toolbus cannot tell which to read. Read it with the read_mcp_resource tool, naming the server",
    });
    const seen = await readsSeen();
    expect([...seen.alpha, ...seen.beta, ...seen.hostile]).not.toContain("both://x");
  });

  it("refuses a URI no server lists or matches, and no server is asked", async () => {
    expect(await refusal((await client()).readResource({ uri: "nowhere://nothing" }))).toEqual({
      code: -32602,
      message:
        "MCP error -32602: Resource not found: nowhere://nothing. No server toolbus serves lists it or has a template matching it; call resources/list and resources/templates/list for what can be read",
    });
    const seen = await readsSeen();
    expect([...seen.alpha, ...seen.beta, ...seen.hostile]).not.toContain("nowhere://nothing");
  });

  it("refuses a URI over the length limit, naming the limit", async () => {
    const uri = `alpha://page/${"9".repeat(uriLength)}`;
    expect(await refusal((await client()).readResource({ uri }))).toEqual({
      code: -32602,
      message: `MCP error -32602: Resource URI too long: ${uri.length} characters, more than the ${uriLength} toolbus routes. Read it with the read_mcp_resource tool, which names its server`,
    });
    expect((await readsSeen()).alpha).not.toContain(uri);
  });

  it("leaves a server's templates past the caps out of routing and of the list, with a warning naming it", async () => {
    const connected = await client();
    const { resourceTemplates } = await connected.listResourceTemplates();
    const hostileNames = resourceTemplates.map((t) => t.name).filter((name) => name.startsWith("hostile"));
    expect(hostileNames).toHaveLength(templatesPerServer);
    expect(resourceTemplates.map((t) => t.name)).not.toContain("one too many");
    expect(resourceTemplates.map((t) => t.name)).not.toContain("too long");
    expect((await refusal(connected.readResource({ uri: "extra://1" }))).message).toContain(
      "Resource not found: extra://1",
    );
    expect((await readsSeen()).hostile).not.toContain("extra://1");
    // Once per server and cap, however often the gateway lists.
    const warnings = stack.logs
      .filter((line) => line.startsWith("gateway: "))
      .map((line) => JSON.parse(line.slice("gateway: ".length)) as Record<string, unknown>)
      .filter((entry) => entry.level === 40 && entry.server === "hostile")
      .map(({ server, count, msg }) => ({ server, count, msg }));
    expect(warnings).toEqual([
      {
        server: "hostile",
        count: 1,
        msg: `MCP server 'hostile' listed 1 resource template(s) longer than ${templateLength} characters; toolbus leaves them out (reads of their URIs are refused)`,
      },
      {
        server: "hostile",
        count: 1,
        msg: `MCP server 'hostile' listed more than ${templatesPerServer} resource templates; toolbus keeps the first ${templatesPerServer} and leaves out 1 (reads of their URIs are refused)`,
      },
    ]);
  });

  it("answers /healthz while a hostile server's templates are matched, and answers the reads", async () => {
    const clientsForReads = await Promise.all([client(), client(), client()]);
    const reads = clientsForReads.map((connected) => refusal(connected.readResource({ uri: HOSTILE_URI })));
    // A backtracking matcher would hold the event loop until long after the test's timeout.
    const health = await fetch(`${gateway.url}/healthz`);
    expect(health.status).toBe(200);
    for (const answer of await Promise.all(reads))
      expect(answer.message).toContain(`Resource not found: ${HOSTILE_URI}.`);
    // The template does match a URI that ends in z: it was matched, not left out.
    const matching = `${HOSTILE_URI.slice(0, -1)}z`;
    expect((await refusal((await client()).readResource({ uri: matching }))).message).toContain(
      `could not be read from MCP server 'hostile'`,
    );
    expect((await readsSeen()).hostile).toEqual([matching]);
  });
});
