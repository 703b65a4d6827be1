/**
 * Browser sign-in for the console and the approvals inbox, against a real identity provider
 * (oidc-provider, from the testkit, its login and consent forms walked as a browser would) and
 * every toolbus service running for real (the gateway with the inbox mounted as `pnpm start`
 * mounts it, NATS, Postgres, dispatcher, catalog, approvals, an MCP server): the whole sign-in
 * without a browser (console → issuer → forms → callback → cookie → the console's API), an
 * approver answering a real call's pending approval from the inbox, a caller that may not, the
 * attacks on the session (cross-site POSTs, a replayed or foreign state, a tampered, foreign or
 * mistaken cookie, the cookie on /mcp) and sign-out. Static bearer tokens keep working beside.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GatewayService } from "@toolbus/gateway";
import { type ApprovalResolvedEvent, ApprovalResolvedEventSchema } from "@toolbus/protocol";
import { type IdentityProvider, startIdentityProvider } from "@toolbus/testkit/identity-provider";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reviewersOAuthConfig } from "./support/oauth-signin.js";
import { type Services, startServices, waitFor } from "./support/services.js";

const CI_TOKEN = "ci-calls-0123456789";
const CLIENT_ID = "toolbus-console";
const CLIENT_SECRET = "console-client-secret-0123456789";
const SESSION_SECRET = "a-session-secret-of-at-least-32-characters";

let idp: IdentityProvider;
let s: Services;
let gateway: GatewayService;
let secretDir: string;
const resolved: ApprovalResolvedEvent[] = [];

beforeAll(async () => {
  idp = await startIdentityProvider({
    accounts: {
      rita: { name: "Rita", groups: ["reviewers"] },
      bob: { name: "Bob", groups: ["eng"] },
      // A session too large for a cookie: 120 groups of 40 characters.
      many: { groups: Array.from({ length: 120 }, (_, index) => `group-${String(index).padStart(34, "0")}`) },
    },
  });
  s = await startServices({
    label: "browser_signin",
    script: { tools: [{ name: "echo" }, { name: "guarded" }] },
    promptTools: ["guarded"],
    principals: [{ name: "ci", role: "caller", token: CI_TOKEN }],
    inbox: true,
  });
  secretDir = await mkdtemp(join(tmpdir(), "toolbus-signin-"));
  await writeFile(join(secretDir, "client-secret"), `${CLIENT_SECRET}\n`);
  gateway = await s.anotherGateway(
    {
      oauth: reviewersOAuthConfig(idp.issuer, ["ops"]),
      signin: {
        clientId: CLIENT_ID,
        clientSecretEnv: "SIGNIN_CLIENT_SECRET",
        sessionSecretEnv: "SIGNIN_SESSION_SECRET",
        sessionTtlMs: 3_600_000,
      },
    },
    { SIGNIN_CLIENT_SECRET_FILE: join(secretDir, "client-secret"), SIGNIN_SESSION_SECRET: SESSION_SECRET },
  );
  // The gateway's client at the issuer, registered as an administrator would: its redirect URI.
  idp.registerClient({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUris: [`${gateway.url}/auth/callback`],
  });
  s.client.nc.subscribe(s.subjects.approvalsResolved, {
    callback: (_error, msg) => {
      const parsed = ApprovalResolvedEventSchema.safeParse(msg.json());
      if (parsed.success) resolved.push(parsed.data);
    },
  });
  await s.client.nc.flush();
}, 180_000);

afterAll(async () => {
  await s?.stop();
  await idp?.stop();
  if (secretDir) await rm(secretDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** Raw HTTP, so a test may send (or leave out) Origin as a browser, or an attacker's page, would. */
function send(
  base: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: unknown },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(options.path, base),
      {
        method: options.method ?? "GET",
        headers: {
          accept: "application/json",
          ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {}
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        });
      },
    );
    req.on("error", reject);
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

/** The cookies one browser keeps for the gateway (by name; every cookie here is Path=/). */
class Browser {
  readonly cookies = new Map<string, string>();
  readonly setCookies: string[] = [];

  take(answer: Answer): Answer {
    const lines = answer.headers["set-cookie"] ?? [];
    for (const line of Array.isArray(lines) ? lines : [lines]) {
      this.setCookies.push(line);
      const [pair = ""] = line.split(";");
      const equals = pair.indexOf("=");
      const name = pair.slice(0, equals);
      const value = pair.slice(equals + 1);
      if (value === "" || /max-age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return answer;
  }

  header(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ") };
  }

  /** A request as this browser sends it: its cookies, and what it keeps of the answer's. */
  async send(
    options: { method?: string; path: string; headers?: Record<string, string>; body?: unknown },
    base = gateway.url,
  ): Promise<Answer> {
    return this.take(await send(base, { ...options, headers: { ...this.header(), ...options.headers } }));
  }
}

/** `GET /auth/login` in `browser`: the redirect to the issuer. */
async function startSignIn(browser: Browser, returnTo = "/"): Promise<URL> {
  const login = await browser.send({ path: `/auth/login?return_to=${encodeURIComponent(returnTo)}` });
  expect(login.status).toBe(302);
  return new URL(login.headers.location as string);
}

/** The whole sign-in of `login` in a fresh browser, as a person does it; returns the browser. */
async function signedIn(login: string, returnTo = "/"): Promise<{ browser: Browser; landed: Answer }> {
  const browser = new Browser();
  const atIssuer = await startSignIn(browser, returnTo);
  const back = await idp.authorize(atIssuer, login);
  const landed = await browser.send({ path: `${back.url.pathname}${back.url.search}` });
  return { browser, landed };
}

async function csrfOf(browser: Browser): Promise<string> {
  const session = await browser.send({ path: "/auth/session" });
  return (session.body as { csrfToken: string }).csrfToken;
}

/** A tool call through REST with the CI bearer token, waiting for an approval; resolves with its reply. */
function callGuarded(callId: string): Promise<Answer> {
  return send(gateway.url, {
    method: "POST",
    path: "/v1/calls",
    headers: { authorization: `Bearer ${CI_TOKEN}` },
    body: { callId, tool: "mcp__scripted__guarded", arguments: JSON.stringify({ note: callId }) },
  });
}

async function pendingFor(browser: Browser, callId: string): Promise<string> {
  let requestId: string | undefined;
  await waitFor(`the approval request of ${callId}`, async () => {
    const list = await browser.send({ path: "/v1/approvals" });
    const pending = (list.body as { pending?: Array<{ requestId: string; callId?: string }> }).pending ?? [];
    requestId = pending.find((one) => one.callId === callId)?.requestId;
    return requestId !== undefined;
  });
  return requestId as string;
}

describe("signing in without a browser: console → issuer → login and consent → callback → cookie", () => {
  it("starts at the console, which offers sign-in, and ends with the console's API answering the session", async () => {
    const browser = new Browser();
    const page = await browser.send({ path: "/", headers: { accept: "text/html" } });
    const before = await browser.send({ path: "/auth/session" });
    const servers = await browser.send({ path: "/v1/servers" });
    expect([page.status, before.body, servers.status]).toEqual([
      200,
      { signedIn: false, signIn: "/auth/login" },
      401,
    ]);
    expect((servers.body as { error: { message: string } }).error.message).toContain(
      "or sign in at /auth/login",
    );

    const atIssuer = await startSignIn(browser, "/");
    expect(`${atIssuer.origin}${atIssuer.pathname}`).toBe(`${idp.issuer}/auth`);
    const asked = Object.fromEntries(atIssuer.searchParams);
    expect(asked).toMatchObject({
      client_id: CLIENT_ID,
      response_type: "code",
      redirect_uri: `${gateway.url}/auth/callback`,
      scope: "openid mcp:tools",
      code_challenge_method: "S256",
      resource: gateway.url,
    });
    expect(Object.keys(asked)).toEqual(expect.arrayContaining(["state", "nonce", "code_challenge"]));
    // The attempt is bound to this browser: an HttpOnly cookie that comes back on the issuer's redirect.
    expect(browser.setCookies.at(-1)).toMatch(
      /^toolbus-signin=[^;]+; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax$/,
    );

    const back = await idp.authorize(atIssuer, "rita");
    const landed = await browser.send({ path: `${back.url.pathname}${back.url.search}` });
    expect([landed.status, landed.headers.location]).toEqual([302, "/"]);
    expect(browser.setCookies.slice(-2)).toEqual([
      "toolbus-signin=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax",
      expect.stringMatching(
        /^toolbus-session=[^;]+; Path=\/; Max-Age=(3600|3599); HttpOnly; SameSite=Strict$/,
      ),
    ]);

    const session = await browser.send({ path: "/auth/session" });
    expect(session.body).toEqual({
      signedIn: true,
      principal: { name: "oauth:rita", role: "approver", displayName: "Rita", groups: ["reviewers"] },
      csrfToken: expect.stringMatching(/^[\w-]{43}$/),
      expiresAt: expect.any(String),
    });
    const api = await browser.send({ path: "/v1/servers" });
    expect([
      api.status,
      (api.body as { servers: Array<{ name: string }> }).servers.map((one) => one.name),
    ]).toEqual([200, ["scripted"]]);
  }, 60_000);

  it("returns to the inbox when the inbox started it, never to another site", async () => {
    const inbox = await signedIn("rita", "/approvals");
    const elsewhere = await signedIn("rita", "//evil.example/approvals");
    expect([inbox.landed.headers.location, elsewhere.landed.headers.location]).toEqual(["/approvals", "/"]);
  }, 60_000);
});

describe("the inbox with a signed-in browser", () => {
  it("an approver signs into the inbox and answers a real call's pending approval in their own name", async () => {
    const { browser } = await signedIn("rita", "/approvals");
    const call = callGuarded("signin-approve-1");
    const requestId = await pendingFor(browser, "signin-approve-1");
    const answer = await browser.send({
      method: "POST",
      path: `/v1/approvals/${encodeURIComponent(requestId)}`,
      headers: { origin: gateway.url, "x-csrf-token": await csrfOf(browser) },
      body: { choice: "allow" },
    });
    expect([answer.status, answer.body]).toEqual([200, { decision: "approved" }]);
    const reply = await call;
    expect([reply.status, (reply.body as { status: string }).status]).toEqual([200, "completed"]);
    await waitFor("the resolved event", () => resolved.some((one) => one.requestId === requestId));
    expect(resolved.find((one) => one.requestId === requestId)).toMatchObject({
      decision: "approved",
      by: "oauth:rita",
    });
  }, 60_000);

  it("a caller who signs in may not list or answer approvals", async () => {
    const bob = (await signedIn("bob")).browser;
    const rita = (await signedIn("rita")).browser;
    const call = callGuarded("signin-caller-1");
    const requestId = await pendingFor(rita, "signin-caller-1");
    const list = await bob.send({ path: "/v1/approvals" });
    const answer = await bob.send({
      method: "POST",
      path: `/v1/approvals/${encodeURIComponent(requestId)}`,
      headers: { origin: gateway.url, "x-csrf-token": await csrfOf(bob) },
      body: { choice: "allow" },
    });
    expect([list.status, answer.status]).toEqual([403, 403]);
    expect((answer.body as { error: { message: string } }).error.message).toContain(
      "oauth:bob has role caller",
    );
    // Still waiting: the approver declines it.
    await rita.send({
      method: "POST",
      path: `/v1/approvals/${encodeURIComponent(requestId)}`,
      headers: { origin: gateway.url, "x-csrf-token": await csrfOf(rita) },
      body: { choice: "decline" },
    });
    expect(((await call).body as { status: string }).status).not.toBe("completed");
  }, 60_000);
});

describe("a cross-site POST to the inbox, each refused with 403 and the approval left waiting", () => {
  it("refuses a POST without Origin, from another origin, without the CSRF token or with another session's", async () => {
    const { browser } = await signedIn("rita", "/approvals");
    const other = (await signedIn("rita")).browser;
    const call = callGuarded("signin-csrf-1");
    const requestId = await pendingFor(browser, "signin-csrf-1");
    const csrf = await csrfOf(browser);
    const port = new URL(gateway.url).port;
    const attempts: Array<[string, Record<string, string>]> = [
      ["no Origin", { "x-csrf-token": csrf }],
      ["another site", { origin: "http://evil.example", "x-csrf-token": csrf }],
      [
        "another port of the same host",
        { origin: `http://127.0.0.1:${Number(port) + 1}`, "x-csrf-token": csrf },
      ],
      ["the same host over https", { origin: `https://127.0.0.1:${port}`, "x-csrf-token": csrf }],
      ["no CSRF token", { origin: gateway.url }],
      // Its last character changed (to `A`, or `B` when it was `A`: one token in 64 ends in `A`).
      [
        "a wrong CSRF token",
        { origin: gateway.url, "x-csrf-token": `${csrf.slice(0, -1)}${csrf.endsWith("A") ? "B" : "A"}` },
      ],
      ["another session's CSRF token", { origin: gateway.url, "x-csrf-token": await csrfOf(other) }],
      ["Origin: null", { origin: "null", "x-csrf-token": csrf }],
    ];
    const statuses: Record<string, number> = {};
    for (const [what, headers] of attempts) {
      const answer = await browser.send({
        method: "POST",
        path: `/v1/approvals/${encodeURIComponent(requestId)}`,
        headers,
        body: { choice: "allow" },
      });
      statuses[what] = answer.status;
    }
    expect(statuses).toEqual(Object.fromEntries(attempts.map(([what]) => [what, 403])));
    expect(resolved.some((one) => one.requestId === requestId)).toBe(false);
    expect(await pendingFor(browser, "signin-csrf-1")).toBe(requestId);

    // The same request from the inbox page itself goes through.
    const answer = await browser.send({
      method: "POST",
      path: `/v1/approvals/${encodeURIComponent(requestId)}`,
      headers: { origin: gateway.url, "x-csrf-token": csrf },
      body: { choice: "allow" },
    });
    expect(answer.status).toBe(200);
    expect(((await call).body as { status: string }).status).toBe("completed");
  }, 60_000);

  it("keeps bearer tokens as they were: a script's POST needs no Origin and no CSRF token", async () => {
    const reply = await send(gateway.url, {
      method: "POST",
      path: "/v1/calls",
      headers: { authorization: `Bearer ${CI_TOKEN}` },
      body: { callId: "signin-bearer-1", tool: "mcp__scripted__echo", arguments: '{"x":1}' },
    });
    expect([reply.status, (reply.body as { status: string }).status]).toEqual([200, "completed"]);
  }, 60_000);

  it("never takes the cookie on /mcp: MCP clients bring a bearer token", async () => {
    const { browser } = await signedIn("rita");
    const mcp = await browser.send({
      method: "POST",
      path: "/mcp",
      headers: { origin: gateway.url, accept: "application/json, text/event-stream" },
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
      },
    });
    expect(mcp.status).toBe(401);
  }, 60_000);
});

describe("the login attempt is bound to the browser that started it", () => {
  it("refuses a callback replayed with the same cookie and code", async () => {
    const browser = new Browser();
    const atIssuer = await startSignIn(browser);
    const attemptCookie = browser.header();
    const back = await idp.authorize(atIssuer, "rita");
    const path = `${back.url.pathname}${back.url.search}`;
    const first = await browser.send({ path });
    const replayed = await send(gateway.url, { path, headers: attemptCookie });
    expect([first.status, replayed.status]).toEqual([302, 400]);
    expect((replayed.body as { error: { message: string } }).error.message).toBe(
      "Bad Request: this sign-in was already completed once; start again at /auth/login",
    );
  }, 60_000);

  it("refuses another browser's callback (a foreign state), and one with no sign-in under way", async () => {
    const victim = new Browser();
    await startSignIn(victim);
    const attacker = new Browser();
    const attackersLogin = await idp.authorize(await startSignIn(attacker), "bob");
    const path = `${attackersLogin.url.pathname}${attackersLogin.url.search}`;
    // Login CSRF: the victim's browser is sent to the attacker's callback.
    const foreign = await victim.send({ path });
    const none = await send(gateway.url, { path });
    expect([foreign.status, none.status]).toEqual([400, 400]);
    expect([
      (foreign.body as { error: { message: string } }).error.message,
      (none.body as { error: { message: string } }).error.message,
    ]).toEqual([
      "Bad Request: the callback's state is not the one this browser's sign-in sent (a callback meant for another sign-in, or another browser); start again at /auth/login",
      "Bad Request: this browser has no sign-in under way (none was started here, or it took more than 10 minutes); start again at /auth/login",
    ]);
    expect(victim.cookies.has("toolbus-session")).toBe(false);
  }, 60_000);

  it("refuses a callback whose state was changed", async () => {
    const browser = new Browser();
    const back = await idp.authorize(await startSignIn(browser), "rita");
    back.url.searchParams.set("state", "guessed-state");
    const answer = await browser.send({ path: `${back.url.pathname}${back.url.search}` });
    expect(answer.status).toBe(400);
  }, 60_000);
});

describe("the session cookie", () => {
  it("is refused when changed, made by another gateway, or an attempt cookie passed off as one", async () => {
    const { browser } = await signedIn("rita");
    const cookie = browser.cookies.get("toolbus-session") as string;
    const parts = cookie.split(".");
    const tamperedCiphertext = [...parts];
    tamperedCiphertext[3] = `${parts[3]!.slice(0, -2)}${parts[3]!.endsWith("AA") ? "BB" : "AA"}`;
    const attempt = new Browser();
    await startSignIn(attempt);
    const attemptCookie = attempt.cookies.get("toolbus-signin") as string;
    const otherGateway = await s.anotherGateway({
      oauth: reviewersOAuthConfig(idp.issuer, ["ops"]),
      signin: { clientId: CLIENT_ID, sessionTtlMs: 3_600_000 },
    });
    const elsewhere = await new Browser().send(
      { path: "/v1/servers", headers: { cookie: `toolbus-session=${cookie}` } },
      otherGateway.url,
    );

    const tries: Record<string, string> = {
      "a changed ciphertext": tamperedCiphertext.join("."),
      "a changed header": `${parts[0]!.slice(0, -1)}${parts[0]!.endsWith("9") ? "0" : "9"}.${parts.slice(1).join(".")}`,
      "an attempt cookie": attemptCookie,
      "not a JWE at all": "hello",
    };
    const answers: Record<string, [number, string]> = {};
    for (const [what, value] of Object.entries(tries)) {
      const answer = await send(gateway.url, {
        path: "/v1/servers",
        headers: { cookie: `toolbus-session=${value}` },
      });
      answers[what] = [answer.status, String(answer.headers["set-cookie"] ?? "")];
    }
    const refused = (reason: string) =>
      `Unauthorized: the sign-in session was refused: ${reason}; sign in again at /auth/login`;
    expect(answers).toEqual(
      Object.fromEntries(
        Object.keys(tries).map((what) => [
          what,
          [401, "toolbus-session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict"],
        ]),
      ),
    );
    expect([elsewhere.status, (elsewhere.body as { error: { message: string } }).error.message]).toEqual([
      401,
      refused("it was not made by this gateway (or was changed since)"),
    ]);
    // The real one still works.
    expect((await browser.send({ path: "/v1/servers" })).status).toBe(200);
  }, 60_000);

  it("is sealed with the shared secret: a second replica with the same session_secret_env accepts it", async () => {
    const { browser } = await signedIn("rita");
    const replica = await s.anotherGateway(
      {
        oauth: reviewersOAuthConfig(idp.issuer, ["ops"]),
        signin: { clientId: CLIENT_ID, sessionSecretEnv: "SIGNIN_SESSION_SECRET", sessionTtlMs: 3_600_000 },
      },
      { SIGNIN_SESSION_SECRET: SESSION_SECRET },
    );
    const answer = await browser.send({ path: "/v1/servers" }, replica.url);
    expect(answer.status).toBe(200);
  }, 60_000);

  it("is https-only behind an https public_url: Secure and __Host- named", async () => {
    const behindTls = await s.anotherGateway({
      publicUrl: "https://toolbus.example.test",
      allowedHosts: ["toolbus.example.test"],
      oauth: reviewersOAuthConfig(idp.issuer, ["ops"]),
      signin: { clientId: CLIENT_ID, sessionTtlMs: 3_600_000 },
    });
    const login = await send(behindTls.url, {
      path: "/auth/login",
      headers: { host: "toolbus.example.test" },
    });
    const location = new URL(login.headers.location as string);
    expect([
      login.status,
      location.searchParams.get("redirect_uri"),
      location.searchParams.get("resource"),
      login.headers["set-cookie"],
    ]).toEqual([
      302,
      "https://toolbus.example.test/auth/callback",
      "https://toolbus.example.test",
      [
        expect.stringMatching(
          /^__Host-toolbus-signin=[^;]+; Path=\/; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/,
        ),
      ],
    ]);
  }, 60_000);
});

describe("what sign-in holds to", () => {
  it("refuses a person whose session would not fit in a cookie, saying what to do", async () => {
    const { browser, landed } = await signedIn("many");
    expect([landed.status, (landed.body as { error: { message: string } }).error.message]).toEqual([
      403,
      expect.stringMatching(
        /^Forbidden: the session of oauth:many would take \d+ bytes, more than a browser keeps in a cookie \(4000\); have the identity provider name fewer groups in its tokens for this client$/,
      ),
    ]);
    expect(browser.cookies.has("toolbus-session")).toBe(false);
  }, 60_000);

  it("answers 503 (retry) when the issuer cannot be asked, not a sign-in failure", async () => {
    const fresh = await s.anotherGateway({
      oauth: reviewersOAuthConfig(idp.issuer, ["ops"]),
      signin: { clientId: CLIENT_ID, sessionTtlMs: 3_600_000 },
    });
    idp.respondInstead("/.well-known/openid-configuration", { status: 500, body: "{}" });
    try {
      const login = await send(fresh.url, { path: "/auth/login" });
      expect([login.status, login.headers["retry-after"]]).toEqual([503, "5"]);
      expect((login.body as { error: { message: string } }).error.message).toBe(
        `Service Unavailable: cannot sign in now: the OpenID Connect metadata of ${idp.issuer} answered HTTP 500; try again shortly`,
      );
    } finally {
      idp.respondInstead("/.well-known/openid-configuration", undefined);
    }
  }, 60_000);

  it("redeems at most 16 codes at once: a callback beyond them is refused while the issuer hangs", async () => {
    const callbacks: Array<{ browser: Browser; path: string }> = [];
    for (let index = 0; index < 17; index++) {
      const browser = new Browser();
      const back = await idp.authorize(await startSignIn(browser), "rita");
      callbacks.push({ browser, path: `${back.url.pathname}${back.url.search}` });
    }
    idp.respondInstead("/token", "hang");
    let answers: Answer[];
    try {
      answers = await Promise.all(callbacks.map(({ browser, path }) => browser.send({ path })));
    } finally {
      idp.respondInstead("/token", undefined);
    }
    const messages = answers.map((answer) => (answer.body as { error: { message: string } }).error.message);
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 503));
    expect(
      messages.filter((message) => message.includes("16 sign-ins are being completed at once")),
    ).toHaveLength(1);
    expect(
      messages.filter((message) => /did not (answer|send its answer) within 5000 ms/.test(message)),
    ).toHaveLength(16);
  }, 60_000);
});

describe("signing out", () => {
  it("ends the session: the cookie is cleared, and the same cookie sent again is refused", async () => {
    const { browser } = await signedIn("rita");
    const kept = browser.header();
    const csrf = await csrfOf(browser);
    // A page elsewhere cannot sign the user out either: it has no CSRF token to send.
    const forged = await browser.send({
      method: "POST",
      path: "/auth/logout",
      headers: { origin: gateway.url },
    });
    const stillIn = await browser.send({ path: "/v1/servers" });
    const out = await browser.send({
      method: "POST",
      path: "/auth/logout",
      headers: { origin: gateway.url, "x-csrf-token": csrf },
    });
    const replayed = await send(gateway.url, { path: "/v1/servers", headers: kept });
    const session = await send(gateway.url, { path: "/auth/session", headers: kept });
    expect([forged.status, stillIn.status, out.status, browser.cookies.has("toolbus-session")]).toEqual([
      403,
      200,
      204,
      false,
    ]);
    expect([
      replayed.status,
      (replayed.body as { error: { message: string } }).error.message,
      session.body,
    ]).toEqual([
      401,
      "Unauthorized: the sign-in session was refused: it was signed out; sign in again at /auth/login",
      { signedIn: false, signIn: "/auth/login" },
    ]);
  }, 60_000);
});
