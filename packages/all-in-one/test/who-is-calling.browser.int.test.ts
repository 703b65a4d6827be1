/**
 * Who is calling, end to end, with every toolbus service running and a real identity provider
 * (oidc-provider) on another site than the gateway: an MCP SDK client signs in to a view, sees
 * only the view's tools, is answered 403 with the step-up challenge for a tool that requires a
 * scope, signs in again with it and calls the tool; the call waits for an approval, which an
 * approver answers in the inbox in a real browser after signing in there; the console's row of
 * the call, its end event and the approval's record in Postgres name both people.
 */
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { GatewayService } from "@toolbus/gateway";
import { type CallEndEvent, CallEndEventSchema } from "@toolbus/protocol";
import { chromiumPath } from "@toolbus/testkit";
import {
  type IdentityProvider,
  startIdentityProvider,
  TestOAuthClient,
} from "@toolbus/testkit/identity-provider";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { reviewersOAuthConfig, signInOnInbox } from "./support/oauth-signin.js";
import { type Services, startServices, waitFor } from "./support/services.js";

const CONSOLE_CLIENT = "toolbus-console";

let idp: IdentityProvider;
let s: Services;
let gateway: GatewayService;
/** The gateway as the browser reaches it: another site than the identity provider's 127.0.0.1. */
let base: string;
let browser: Browser | undefined;
const ended: CallEndEvent[] = [];

beforeAll(async () => {
  idp = await startIdentityProvider({
    accounts: {
      alice: { name: "Alice", groups: ["eng"] },
      rita: { name: "Rita", groups: ["reviewers"] },
    },
    scopes: ["mcp:tools", "docs:write"],
  });
  s = await startServices({
    label: "who_is_calling",
    script: { tools: [{ name: "read_page" }, { name: "write_page" }, { name: "drop_database" }] },
    promptTools: ["write_page"],
    inbox: true,
    views: [{ name: "docs", servers: ["scripted"], tools: ["*_page"], groups: ["eng"] }],
    toolScopes: { scripted: { write_page: ["docs:write"] } },
  });
  gateway = await s.anotherGateway({
    allowedHosts: ["localhost", "127.0.0.1"],
    oauth: reviewersOAuthConfig(idp.issuer),
    signin: { clientId: CONSOLE_CLIENT, sessionTtlMs: 3_600_000 },
  });
  base = `http://localhost:${new URL(gateway.url).port}`;
  idp.registerClient({ clientId: CONSOLE_CLIENT, redirectUris: [`${base}/auth/callback`] });
  s.client.nc.subscribe(s.subjects.callEnd, {
    callback: (_error, msg) => {
      const parsed = CallEndEventSchema.safeParse(msg.json());
      if (parsed.success) ended.push(parsed.data);
    },
  });
  await s.client.nc.flush();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop();
  await idp?.stop();
});

it("a caller signs in to a view and steps up for a scope; an approver signs in to the inbox and answers; both are named", async () => {
  // 1. The MCP SDK client signs in through the identity provider, for the view's own resource.
  const view = `${gateway.url}/mcp/docs`;
  const auth = new TestOAuthClient(idp);
  const transport = () => new StreamableHTTPClientTransport(new URL(view), { authProvider: auth });
  const first = transport();
  await expect(
    new Client({ name: "who-is-calling", version: "1.0.0" }).connect(first),
  ).rejects.toBeInstanceOf(UnauthorizedError);
  await first.finishAuth((await idp.authorize(auth.authorizationUrl as URL, "alice")).code);
  const client = new Client({ name: "who-is-calling", version: "1.0.0" });
  const signedIn = transport();
  await client.connect(signedIn);
  try {
    // 2. It sees the view's tools only.
    const listed = (await client.listTools()).tools.map((tool) => tool.name).sort();
    expect(listed).toEqual(["scripted__read_page", "scripted__write_page"]);

    // 3. A tool that requires a scope the token lacks: 403 and the step-up challenge; nothing ran.
    const stepUp = await client
      .callTool({ name: "scripted__write_page", arguments: {} })
      .catch((error: unknown) => error);
    expect(stepUp).toBeInstanceOf(Error);
    const asked = auth.authorizationUrl as URL;
    expect([
      asked.searchParams.get("scope")?.split(" ").includes("docs:write"),
      asked.searchParams.get("resource"),
    ]).toEqual([true, view]);
    expect((await s.upstream.calls()).filter((call) => call.tool === "write_page")).toEqual([]);

    // 4. An approver signs in to the inbox in a browser; the console, in the same browser, follows calls.
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--headless", "--no-sandbox"] });
    const signedInBrowser = await browser.newContext();
    const page = await signedInBrowser.newPage();
    await page.goto(`${base}/approvals`);
    await signInOnInbox(page, base, "rita");
    await expect.poll(() => page.locator("#who .who").textContent()).toBe("Rita (approver)");
    const consolePage = await signedInBrowser.newPage();
    await consolePage.goto(`${base}/`);

    // 5. Signed in again with the scope, the caller calls the tool, which waits for the approver.
    await signedIn.finishAuth((await idp.authorize(asked, "alice")).code);
    const call = client.callTool({ name: "scripted__write_page", arguments: { page: "home" } });

    // 6. The approver answers in the inbox.
    const card = page.locator("article[data-request-id]").first();
    await card.waitFor({ timeout: 15_000 });
    const requestId = await card.getAttribute("data-request-id");
    // The inbox names who asked, by the name the identity provider gives.
    expect(await card.locator(".meta dd").allTextContents()).toContain("Alice (oauth:alice)");
    await card.locator('button[data-choice="allow"]').click();
    await expect.poll(() => card.locator(".outcome").textContent()).toBe("Approved (you)");

    const result = await call;
    expect(result.isError ?? false).toBe(false);
    // The console names both on the call's row.
    await expect
      .poll(() => consolePage.locator("#calls tbody tr .who").first().textContent(), { timeout: 15_000 })
      .toBe("Alice (oauth:alice)answered by oauth:rita");
    expect((await s.upstream.calls()).filter((one) => one.tool === "write_page")).toHaveLength(1);

    // 7. The end event and the approval record name the caller and the approver.
    await waitFor("the call's end event", () =>
      ended.some((event) => event.invocation.tool === "write_page"),
    );
    const end = ended.find((event) => event.invocation.tool === "write_page");
    const { rows } = await s.db.query<{ requested_by: string; requester_name: string; resolved_by: string }>(
      `SELECT request->>'requestedBy' AS requested_by, request->>'requesterName' AS requester_name, resolved_by
         FROM approval_requests WHERE request_id = $1`,
      [requestId],
    );
    expect({
      event: [end?.requestedBy, end?.requesterName, end?.decidedBy, end?.status],
      record: rows.map((row) => [row.requested_by, row.requester_name, row.resolved_by]),
    }).toEqual({
      event: ["oauth:alice", "Alice", "oauth:rita", "completed"],
      record: [["oauth:alice", "Alice", "oauth:rita"]],
    });
  } finally {
    await client.close();
  }
}, 180_000);
