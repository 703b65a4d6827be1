/**
 * The console page in a real browser (Debian's or Homebrew's Chromium, or CHROMIUM_PATH, driven by playwright-core)
 * against a gateway with the real catalog and dispatcher behind it: servers with their status,
 * errors and what they said about themselves, the catalog search, calls made through REST appearing live with status and
 * duration, the approvals section when the inbox is not mounted, the bearer-token prompt, and the
 * approvals inbox page behind tokens.
 * Leaves a screenshot at /tmp/console.png.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { Readable } from "node:stream";
import { routeAccess } from "@toolbus/http-guard";
import { chromiumPath, withPgSchema } from "@toolbus/testkit";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { GatewayService } from "../src/gateway-service.js";
import { natsUrl, REPO_ROOT, Stack, tomlFor } from "./support/stack.js";

/** A 1×1 PNG, as a server would send its icon inline. */
const ICON =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const ALPHA_INFO = {
  title: "Alpha Tools",
  version: "3.0.1",
  description: "Echoes, things and failures for the console test.",
  websiteUrl: "https://alpha.example.org/docs",
  icons: [{ src: ICON, mimeType: "image/png" }],
};

let stack: Stack;
let alpha: StdioTestServer;
let gateway: GatewayService;
let browser: Browser | undefined;

beforeAll(async () => {
  alpha = await startTestServer({
    transport: "stdio",
    script: {
      serverInfo: ALPHA_INFO,
      tools: [
        { name: "echo", description: "Echoes its arguments." },
        { name: "get-thing", description: "Gets the thing.", behavior: { kind: "text", text: "thing" } },
        { name: "slow", description: "Takes its time.", behavior: { kind: "delay", ms: 1_500 } },
        { name: "boom", description: "Always fails.", behavior: { kind: "error_result", text: "it broke" } },
      ],
    },
  });
  stack = await Stack.start(
    "gw_console",
    tomlFor([
      { name: "alpha", command: alpha.command, args: alpha.args },
      { name: "broken", command: "/bin/false", args: [] },
      { name: "gated", command: alpha.command, args: alpha.args, approvalMode: "prompt" },
    ]),
  );
  stack.defer(() => alpha.dispose());
  gateway = await stack.gateway();
}, 90_000);

afterEach(async () => {
  await browser?.close();
  browser = undefined;
});

afterAll(async () => {
  await stack?.close();
});

async function openConsole(url: string): Promise<Page> {
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
  await page.goto(`${url}/`);
  return page;
}

function callThroughRest(
  tool: string,
  url = gateway.url,
  token?: string,
): { callId: string; reply: Promise<unknown> } {
  const callId = `console-${randomUUID()}`;
  const reply = fetch(`${url}/v1/calls`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ callId, tool, arguments: '{"note":"from the test"}' }),
  }).then((response) => response.json());
  return { callId, reply };
}

const statusOf = (page: Page, server: string) =>
  page.locator(`#servers tr[data-server="${server}"] .status`).textContent();

describe("the console page", () => {
  it("shows the servers, searches the catalog and follows a REST call live to its end", async () => {
    const page = await openConsole(gateway.url);
    await expect.poll(() => statusOf(page, "alpha"), { timeout: 15_000 }).toBe("ready");
    await expect.poll(() => statusOf(page, "broken"), { timeout: 15_000 }).toBe("failed");
    await expect.poll(() => page.locator("#live").textContent()).toBe("live");
    expect({
      brokenError: await page.locator('#servers tr[data-server="broken"] td.error').textContent(),
      tools: await page
        .locator("#catalog-list li[data-tool]")
        .evaluateAll((items) => items.map((item) => item.getAttribute("data-tool"))),
      // Shown by the name MCP clients see.
      names: await page.locator("#catalog-list li[data-tool] .tool-name").allTextContents(),
      count: await page.locator("#catalog-count").textContent(),
      approvals: await page.locator("#approvals-absent").textContent(),
      approvalsShown: await page.locator("#approvals-absent").isVisible(),
      inboxLinkShown: await page.locator("#inbox-link").isVisible(),
    }).toEqual({
      brokenError: expect.stringContaining("broken"),
      tools: [
        "mcp__alpha__boom",
        "mcp__alpha__echo",
        "mcp__alpha__get_thing",
        "mcp__alpha__slow",
        "mcp__gated__boom",
        "mcp__gated__echo",
        "mcp__gated__get_thing",
        "mcp__gated__slow",
      ],
      names: [
        "alpha__boom",
        "alpha__echo",
        "alpha__get_thing",
        "alpha__slow",
        "gated__boom",
        "gated__echo",
        "gated__get_thing",
        "gated__slow",
      ],
      count: "8 tools",
      approvals: "approvals inbox not served by this gateway",
      approvalsShown: true,
      inboxLinkShown: false,
    });

    await page.locator("#catalog-search").fill("thing");
    expect({
      tools: await page
        .locator("#catalog-list li[data-tool]")
        .evaluateAll((items) => items.map((item) => item.getAttribute("data-tool"))),
      count: await page.locator("#catalog-count").textContent(),
    }).toEqual({ tools: ["mcp__alpha__get_thing", "mcp__gated__get_thing"], count: "2 of 8 tools" });

    const slow = callThroughRest("mcp__alpha__slow");
    const row = page.locator(`#calls tr[data-call-id="${slow.callId}"]`);
    await row.waitFor({ timeout: 10_000 });
    expect({
      tool: await row.locator("td.tool").textContent(),
      status: await row.locator(".status").textContent(),
    }).toEqual({ tool: "alpha / slow", status: "in progress" });
    await slow.reply;
    await expect.poll(() => row.locator(".status").textContent()).toBe("completed");
    expect(await row.locator(".duration").textContent()).toMatch(/^\d+(\.\d+)? s$/);

    const boom = callThroughRest("mcp__alpha__boom");
    await boom.reply;
    const failed = page.locator(`#calls tr[data-call-id="${boom.callId}"]`);
    await expect.poll(() => failed.locator(".status").textContent()).toBe("failed");
    expect({
      error: await failed.locator(".error").textContent(),
      newestFirst: await page
        .locator("#calls tbody tr")
        .evaluateAll((rows) => rows.map((tr) => tr.getAttribute("data-call-id"))),
    }).toEqual({ error: "it broke", newestFirst: [boom.callId, slow.callId] });

    await page.screenshot({ path: "/tmp/console.png", fullPage: true });
  }, 60_000);

  it("shows what each server said about itself: title, version, description, website and icon", async () => {
    const page = await openConsole(gateway.url);
    const about = page.locator('#servers tr[data-server="alpha"] td.name');
    await about.locator(".server-title").waitFor({ timeout: 15_000 });
    expect({
      title: await about.locator(".server-title").textContent(),
      description: await about.locator(".server-description").textContent(),
      website: await about.locator("a.server-website").getAttribute("href"),
      icon: await about.locator("img.server-icon").getAttribute("src"),
      // A server that never started has nothing to say.
      broken: await page.locator('#servers tr[data-server="broken"] .about').count(),
    }).toEqual({
      title: "Alpha Tools 3.0.1",
      description: ALPHA_INFO.description,
      website: ALPHA_INFO.websiteUrl,
      icon: ICON,
      broken: 0,
    });
  }, 60_000);

  it("asks for a bearer token on a 401, then shows the gateway with it", async () => {
    const guarded = await stack.gateway({ tokens: ["console-token"] });
    const page = await openConsole(guarded.url);
    await page.locator("#auth").waitFor({ state: "visible", timeout: 10_000 });
    expect(await page.locator("#auth h2").textContent()).toBe("This gateway needs a bearer token");
    await page.locator("#token").fill("console-token");
    await page.locator("#auth button").click();
    await expect.poll(() => statusOf(page, "alpha"), { timeout: 15_000 }).toBe("ready");
    // The event stream is read with the token too.
    await expect.poll(() => page.locator("#live").textContent()).toBe("live");
    expect({
      formShown: await page.locator("#auth").isVisible(),
      forgetShown: await page.locator("#forget").isVisible(),
    }).toEqual({ formShown: false, forgetShown: true });
  }, 60_000);

  it("shows a call waiting for approval, and Allow lets it run", async () => {
    const approvals = await sharedApprovalsService();
    const withInbox = await stack.gateway({ plugins: [forwardApprovals(approvals)] });
    const page = await openConsole(withInbox.url);
    await expect.poll(() => page.locator("#approvals-empty").isVisible(), { timeout: 15_000 }).toBe(true);

    const gated = callThroughRest("mcp__gated__echo", withInbox.url);
    const card = page.locator(
      `#approvals-list article[data-request-id="mcp_tool_call_approval_${gated.callId}"]`,
    );
    await card.waitFor({ timeout: 15_000 });
    expect({
      question: await card.locator("h3").textContent(),
      route: await card.locator(".mono").textContent(),
      arguments: JSON.parse((await card.locator("pre").textContent()) ?? "null"),
      buttons: await card
        .locator("button")
        .evaluateAll((buttons) => buttons.map((button) => button.getAttribute("data-choice"))),
      waiting: await page.locator("#approvals-state").textContent(),
      live: await page.locator(`#calls tr[data-call-id="${gated.callId}"] .status`).textContent(),
    }).toEqual({
      question: 'Allow the gated MCP server to run tool "echo"?',
      route: "gated / echo",
      arguments: { note: "from the test" },
      buttons: ["allow", "cancel"],
      waiting: "1 waiting",
      live: "in progress",
    });
    await page.screenshot({ path: "/tmp/console-approval.png", fullPage: true });

    await card.locator('button[data-choice="allow"]').click();
    // The page keeps an answered card for 4 s: read it first, then wait for the call.
    await expect.poll(() => card.locator(".outcome").textContent()).toMatch(/^Approved \((you|anonymous)\)$/);
    expect(await gated.reply).toMatchObject({ callId: gated.callId, status: "completed" });
    await expect
      .poll(() => page.locator(`#calls tr[data-call-id="${gated.callId}"] .status`).textContent())
      .toBe("completed");
  }, 120_000);

  it("opens the approvals inbox behind bearer tokens with the token the console keeps", async () => {
    const approvals = await sharedApprovalsService();
    const guarded = await stack.gateway({ tokens: ["inbox-token"], plugins: [forwardApprovals(approvals)] });
    const page = await openConsole(guarded.url);
    await page.goto(`${guarded.url}/approvals`);
    await page.locator("#auth").waitFor({ state: "visible", timeout: 10_000 });
    expect(await page.locator("#status").textContent()).toBe("token needed");

    await page.goto(`${guarded.url}/`);
    await page.locator("#token").fill("inbox-token");
    await page.locator("#auth button").click();
    await expect.poll(() => statusOf(page, "alpha"), { timeout: 15_000 }).toBe("ready");
    await page.goto(`${guarded.url}/approvals`);
    await expect.poll(() => page.locator("#status").textContent(), { timeout: 10_000 }).toBe("live");

    const gated = callThroughRest("mcp__gated__echo", guarded.url, "inbox-token");
    const card = page.locator(`article[data-request-id="mcp_tool_call_approval_${gated.callId}"]`);
    await card.waitFor({ timeout: 15_000 });
    await card.locator("button", { hasText: /^Allow$/ }).click();
    expect(await gated.reply).toMatchObject({ callId: gated.callId, status: "completed" });
    expect(await page.locator("#auth").isVisible()).toBe(false);
  }, 120_000);
});

/**
 * One approvals service for the suite: two on the same prefix would share the decide subject but
 * not their Postgres schemas, so a request could wait on one and be answered on the other.
 */
let approvalsService: Promise<string> | undefined;
function sharedApprovalsService(): Promise<string> {
  approvalsService ??= startApprovalsService(stack);
  return approvalsService;
}

/** The approvals service as a child process on the stack's prefix, its own HTTP inbox on a free port. */
async function startApprovalsService(on: Stack): Promise<string> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error("DATABASE_URL is not set: run the tests through vitest");
  const schema = await withPgSchema(databaseUrl, "gw_console");
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "--conditions=@toolbus/source",
      "--import",
      "tsx",
      "services/approvals/src/main.ts",
      "--config",
      on.configPath,
      "--port",
      "0",
    ],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, TOOLBUS_PREFIX: on.prefix, NATS_URL: natsUrl(), DATABASE_URL: schema.url },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  on.defer(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      child.kill("SIGTERM");
      await exited;
      clearTimeout(timer);
    }
    await schema.drop();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error("the approvals service did not listen within 30 s")),
      30_000,
    );
    let buffer = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const lines = buffer.split("\n");
      buffer = lines.pop() ?? "";
      for (const line of lines) {
        on.logs.push(`approvals: ${line}`);
        const url = /"url":"(http:[^"]+)"/.exec(line)?.[1];
        if (url) {
          clearTimeout(timer);
          resolve(url);
        }
      }
    });
    child.stderr?.on("data", (chunk: Buffer) => on.logs.push(`approvals stderr: ${chunk.toString("utf8")}`));
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`the approvals service exited with ${code}:\n${on.logs.slice(-20).join("\n")}`));
    });
  });
}

/**
 * The approvals routes on the gateway's port, as the all-in-one process mounts them, here
 * forwarded to the approvals service's own HTTP (the gateway does not depend on that package).
 */
function forwardApprovals(base: string): FastifyPluginAsync {
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    const post = request.method === "POST";
    const upstream = await fetch(`${base}${request.url}`, {
      method: request.method,
      headers: {
        accept: request.headers.accept ?? "*/*",
        ...(post ? { "content-type": "application/json" } : {}),
      },
      ...(post ? { body: JSON.stringify(request.body) } : {}),
    });
    reply
      .code(upstream.status)
      .header("content-type", upstream.headers.get("content-type") ?? "application/json");
    // The inbox page's CSP allows its own inline script by hash: it travels with the page.
    const csp = upstream.headers.get("content-security-policy");
    if (csp) reply.header("content-security-policy", csp);
    return reply.send(upstream.body ? Readable.fromWeb(upstream.body as never) : "");
  };
  return async (app) => {
    // The accesses the approvals plugin declares for the same routes.
    app.get("/approvals", routeAccess("page"), forward);
    app.get("/v1/approvals", routeAccess("approve"), forward);
    app.post("/v1/approvals/:requestId", routeAccess("approve"), forward);
    app.get("/v1/approvals/events", routeAccess("approve"), forward);
  };
}
