/**
 * The inbox page in a real browser (Debian's or Homebrew's Chromium, or CHROMIUM_PATH, driven by playwright-core): a call
 * put to a human appears live, shows its prompt, arguments, options and the digest of the call it
 * is bound to, and clicking Allow releases the waiting decide. Leaves a screenshot at /tmp/inbox.png.
 */

import { callDigestOf } from "@toolbus/policy";
import { chromiumPath } from "@toolbus/testkit";
import { type Browser, chromium } from "playwright-core";
import { afterEach, describe, expect, it } from "vitest";
import { decide, decideRequest, testEnv } from "./support.js";

let browser: Browser | undefined;
afterEach(async () => {
  await browser?.close();
  browser = undefined;
});

describe("the approvals inbox page", () => {
  it("shows a waiting call as it arrives, and Allow releases it", async () => {
    const env = await testEnv("inbox browser");
    const service = await env.start({ http: { port: 0 } });
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
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    await page.goto(`${service.httpUrl}/approvals`);
    await expect.poll(() => page.locator("#status").textContent()).toBe("live");
    expect(await page.locator("#empty").isVisible()).toBe(true);

    const request = decideRequest({
      arguments: { q: "release notes", notes: "line\n".repeat(40), limit: 3 },
      annotations: { destructiveHint: true },
    });
    const decision = decide(env.client, service.subjects, request);
    const card = page.locator(`article[data-request-id="mcp_tool_call_approval_${request.callId}"]`);
    await card.waitFor({ timeout: 10_000 });

    expect({
      question: await card.locator("h2").textContent(),
      buttons: await card.locator("button").allTextContents(),
      badges: await card.locator(".badge").allTextContents(),
      argumentNames: await card.locator(".arg .name").allTextContents(),
      folded: await card.locator("details summary").allTextContents(),
      emptyShown: await page.locator("#empty").isVisible(),
      digestShown: (await card.locator(".meta dd").allTextContents()).includes(callDigestOf(request)),
    }).toEqual({
      question: 'Allow the docs MCP server to run tool "search"?',
      buttons: ["Allow", "Allow for this session", "Allow and don't ask me again", "Cancel"],
      badges: ["destructive"],
      argumentNames: ["q", "notes", "limit"],
      folded: [expect.stringMatching(/^line line line .*… \(200 characters\)$/)],
      emptyShown: false,
      digestShown: true,
    });
    await page.screenshot({ path: "/tmp/inbox.png", fullPage: true });

    await card.getByRole("button", { name: "Allow", exact: true }).click();
    // The page keeps an answered card for 4 s: read it first, then wait for the decision.
    await expect.poll(() => card.locator(".outcome").textContent()).toMatch(/^Approved \((you|anonymous)\)$/);
    await expect(decision).resolves.toEqual({
      decision: "approved",
      source: "human",
      decidedBy: "anonymous",
    });
  });

  it("names who asked, and gives 'don't ask me again' to everyone only when the approver ticks it", async () => {
    const env = await testEnv("inbox browser scope");
    const service = await env.start({ http: { port: 0 } });
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--headless", "--no-sandbox"] });
    const page = await browser.newPage();
    await page.goto(`${service.httpUrl}/approvals`);
    await expect.poll(() => page.locator("#status").textContent()).toBe("live");
    /** Asks as `requester`; answers, on the page, with "don't ask me again", for everyone when `everyone`. */
    const askAndAllowAlways = async (requester: string, everyone: boolean, tool: string) => {
      // A thread is its principal's (the gateway binds it): each requester has its own.
      const request = decideRequest({
        requestedBy: requester,
        threadId: `thread-${requester}`,
        tool,
        hookName: `mcp__docs__${tool}`,
      });
      const decision = decide(env.client, service.subjects, request);
      const card = page.locator(`article[data-request-id="mcp_tool_call_approval_${request.callId}"]`);
      await card.waitFor({ timeout: 10_000 });
      const shown = await card.locator(".meta dd").allTextContents();
      if (everyone) await card.locator('input[name="for-everyone"]').check();
      await card.getByRole("button", { name: "Allow and don't ask me again" }).click();
      return { shown, decision: await decision };
    };
    const asked = await askAndAllowAlways("carol", false, "search");
    expect(asked.shown).toContain("carol");
    expect(asked.decision).toEqual({ decision: "approved_always", source: "human", decidedBy: "anonymous" });
    // Carol's grant is carol's: dave is asked; carol is not.
    const later = (requester: string) =>
      decideRequest({ requestedBy: requester, threadId: `later-${requester}` });
    expect(await decide(env.client, service.subjects, later("carol"))).toEqual({
      decision: "approved_always",
      source: "persistent",
    });
    const daveAsked = await askAndAllowAlways("dave", true, "search");
    expect(daveAsked.decision).toEqual({
      decision: "approved_always",
      source: "human",
      decidedBy: "anonymous",
    });
    // Given to everyone: erin, who never asked, is not asked either.
    expect(await decide(env.client, service.subjects, later("erin"))).toEqual({
      decision: "approved_always",
      source: "persistent",
    });
  });
});
