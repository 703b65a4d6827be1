/**
 * Browser sign-in in a real browser (Debian's or Homebrew's Chromium, or CHROMIUM_PATH, driven
 * by playwright-core): the approvals inbox offers sign-in, the person signs in on the identity
 * provider's own pages (oidc-provider, on another site than the gateway: 127.0.0.1 against
 * localhost, so the cookies' SameSite rules are the ones a deployment meets), lands back on the
 * inbox signed in, answers a real call's approval with a click, and signs out; a caller who
 * signs in is told they may not answer. Every toolbus service runs for real behind it.
 */
import { request } from "node:http";
import type { GatewayService } from "@toolbus/gateway";
import { type ApprovalResolvedEvent, ApprovalResolvedEventSchema } from "@toolbus/protocol";
import { chromiumPath } from "@toolbus/testkit";
import { type IdentityProvider, startIdentityProvider } from "@toolbus/testkit/identity-provider";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { reviewersOAuthConfig, signInOnInbox } from "./support/oauth-signin.js";
import { type Services, startServices, waitFor } from "./support/services.js";

const CI_TOKEN = "ci-calls-0123456789";
const CLIENT_ID = "toolbus-console";

let idp: IdentityProvider;
let s: Services;
let gateway: GatewayService;
/** The gateway as the browser reaches it: another site than the identity provider's 127.0.0.1. */
let base: string;
let browser: Browser | undefined;
const resolved: ApprovalResolvedEvent[] = [];

beforeAll(async () => {
  idp = await startIdentityProvider({
    accounts: { rita: { name: "Rita", groups: ["reviewers"] }, bob: { name: "Bob", groups: ["eng"] } },
  });
  s = await startServices({
    label: "browser_signin_ui",
    script: { tools: [{ name: "guarded" }] },
    promptTools: ["guarded"],
    principals: [{ name: "ci", role: "caller", token: CI_TOKEN }],
    inbox: true,
  });
  gateway = await s.anotherGateway({
    allowedHosts: ["localhost", "127.0.0.1"],
    oauth: reviewersOAuthConfig(idp.issuer),
    // A public client: PKCE alone.
    signin: { clientId: CLIENT_ID, sessionTtlMs: 3_600_000 },
  });
  base = `http://localhost:${new URL(gateway.url).port}`;
  idp.registerClient({ clientId: CLIENT_ID, redirectUris: [`${base}/auth/callback`] });
  s.client.nc.subscribe(s.subjects.approvalsResolved, {
    callback: (_error, msg) => {
      const parsed = ApprovalResolvedEventSchema.safeParse(msg.json());
      if (parsed.success) resolved.push(parsed.data);
    },
  });
  await s.client.nc.flush();
}, 180_000);

afterEach(async () => {
  await browser?.close();
  browser = undefined;
});

afterAll(async () => {
  await s?.stop();
  await idp?.stop();
});

async function openInbox(): Promise<Page> {
  browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}/approvals`);
  return page;
}

/** A tool call through REST with the CI bearer token; it waits for an approval. */
function callGuarded(callId: string): Promise<{ status: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL("/v1/calls", gateway.url),
      {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${CI_TOKEN}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify({ callId, tool: "mcp__scripted__guarded", arguments: "{}" }));
  });
}

describe("the inbox in a browser", () => {
  it("an approver signs in at the identity provider, answers a pending call with a click, and signs out", async () => {
    const page = await openInbox();
    await signInOnInbox(page, base, "rita");
    await expect.poll(() => page.locator("#who .who").textContent()).toBe("Rita (approver)");
    await expect.poll(() => page.locator("#status").textContent()).toBe("live");
    const cookies = await page.context().cookies(base);
    expect(cookies.map(({ name, httpOnly, sameSite, path }) => ({ name, httpOnly, sameSite, path }))).toEqual(
      [{ name: "toolbus-session", httpOnly: true, sameSite: "Strict", path: "/" }],
    );

    const call = callGuarded("browser-signin-1");
    const card = page.locator('article[data-request-id="mcp_tool_call_approval_browser-signin-1"]');
    await card.waitFor({ timeout: 15_000 });
    await card.locator('button[data-choice="allow"]').click();
    // The page keeps an answered card for 4 s: read it first, then wait for the call.
    await expect.poll(() => card.locator(".outcome").textContent()).toBe("Approved (you)");
    expect(await call).toMatchObject({ status: "completed" });
    await waitFor("the resolved event", () => resolved.some((one) => one.callId === "browser-signin-1"));
    expect(resolved.find((one) => one.callId === "browser-signin-1")).toMatchObject({
      decision: "approved",
      by: "oauth:rita",
    });

    await page.locator("#sign-out").click();
    await page.locator("#auth").waitFor({ state: "visible", timeout: 15_000 });
    expect([
      await page.locator("#signin-offer").isVisible(),
      (await page.context().cookies(base)).map((cookie) => cookie.name),
    ]).toEqual([true, []]);
  }, 120_000);

  it("a caller who signs in is told that only approvers answer, and sees no approval", async () => {
    const page = await openInbox();
    await signInOnInbox(page, base, "bob");
    await page.locator("#forbidden").waitFor({ state: "visible", timeout: 15_000 });
    expect([
      await page.locator("#who .who").textContent(),
      await page.locator("#status").textContent(),
      await page.locator("#forbidden").textContent(),
      await page.locator("#list article").count(),
    ]).toEqual([
      "Bob (caller)",
      "not an approver",
      'Forbidden: the token of oauth:bob has role caller, and this needs approver or admin (access "approve"); use a token with one of those roles. Only approvers and admins answer approvals.',
      0,
    ]);
  }, 120_000);
});
