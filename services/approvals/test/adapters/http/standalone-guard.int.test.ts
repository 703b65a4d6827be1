/**
 * The approvals inbox run alone (its own port, as in docker-compose and Kubernetes) behind the
 * gateway's guard, attacked as an intruder or a user with the wrong token would: a rebinding Host,
 * a cross-site POST, an `Origin: null` POST, a caller's token, a forged `by`, a wildcard bind
 * without tokens. Real NATS, Postgres and HTTP.
 */
import { request } from "node:http";
import { type ApprovalResolvedEvent, ApprovalResolvedEventSchema } from "@toolbus/protocol";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { decide, decideRequest, testEnv, waitForPending } from "../../support.js";

const PRINCIPALS = [
  { name: "alice", role: "approver" as const, token: "alice-token" },
  { name: "bob", role: "caller" as const, token: "bob-token" },
];

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** Raw HTTP: fetch would not let the test forge a Host header. */
function send(
  baseUrl: string,
  options: { method?: string; path: string; headers?: Record<string, string>; body?: unknown },
): Promise<Answer> {
  const url = new URL(options.path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: options.method ?? "GET",
        headers: {
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

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const refusal = (message: string, code = "unauthorized") => ({
  error: { code, message, retryable: false },
});

async function guardedInbox(name: string) {
  const env = await testEnv(name);
  const service = await env.start({ http: { host: "127.0.0.1", port: 0, principals: PRINCIPALS } });
  const url = service.httpUrl!;
  const resolved: ApprovalResolvedEvent[] = [];
  const sub = env.client.nc.subscribe(service.subjects.approvalsResolved, {
    callback: (_error, msg) => {
      const parsed = ApprovalResolvedEventSchema.safeParse(msg.json());
      if (parsed.success) resolved.push(parsed.data);
    },
  });
  await env.client.nc.flush();
  const call = decideRequest();
  const decision = decide(env.client, service.subjects, call);
  const pending = await waitForPending(env.client, service.subjects, call.callId);
  return {
    env,
    service,
    url,
    pending,
    decision,
    resolved,
    stop: () => sub.unsubscribe(),
  };
}

describe("the approvals inbox run alone", () => {
  it("refuses a DNS-rebinding Host and a cross-site or Origin-null POST, even with an approver's token", async () => {
    const inbox = await guardedInbox("standalone rebinding");
    const path = `/v1/approvals/${inbox.pending.requestId}`;
    const port = new URL(inbox.url).port;
    const answers = await Promise.all([
      send(inbox.url, {
        path: "/v1/approvals",
        headers: { ...bearer("alice-token"), host: "evil.example.com" },
      }),
      send(inbox.url, {
        method: "POST",
        path,
        headers: { ...bearer("alice-token"), origin: "https://evil.example.com" },
        body: { choice: "allow" },
      }),
      send(inbox.url, {
        method: "POST",
        path,
        headers: { ...bearer("alice-token"), origin: "null" },
        body: { choice: "allow" },
      }),
    ]);
    expect(answers.map(({ status, body }) => ({ status, body }))).toEqual([
      {
        status: 403,
        body: refusal(
          'Forbidden: Host header "evil.example.com" is not an allowed host (localhost, 127.0.0.1, [::1]); add it to [gateway] allowed_hosts if this gateway should answer to it',
        ),
      },
      {
        status: 403,
        body: refusal(
          'Forbidden: Origin "https://evil.example.com" is not an allowed host (localhost, 127.0.0.1, [::1]); add it to [gateway] allowed_hosts if browsers on it may call this gateway',
        ),
      },
      {
        status: 403,
        body: refusal(
          "Forbidden: Origin null (a sandboxed frame, a file: page or a cross-site redirect) may not POST; send the request from a page served by an allowed host",
        ),
      },
    ]);
    // Nothing was answered: a page on this host may still do it.
    const fromHome = await send(inbox.url, {
      method: "POST",
      path,
      headers: { ...bearer("alice-token"), origin: `http://localhost:${port}` },
      body: { choice: "allow" },
    });
    expect({ status: fromHome.status, body: fromHome.body }).toEqual({
      status: 200,
      body: { decision: "approved" },
    });
    await inbox.decision;
    inbox.stop();
  });

  it("lets no token or a caller's token list or answer, and records the approver's name whatever the body says", async () => {
    const inbox = await guardedInbox("standalone roles");
    const path = `/v1/approvals/${inbox.pending.requestId}`;
    const [anonymous, caller, callerList] = await Promise.all([
      send(inbox.url, { method: "POST", path, body: { choice: "allow" } }),
      send(inbox.url, { method: "POST", path, headers: bearer("bob-token"), body: { choice: "allow" } }),
      send(inbox.url, { path: "/v1/approvals", headers: bearer("bob-token") }),
    ]);
    const forbidden = refusal(
      'Forbidden: the token of bob has role caller, and this needs approver or admin (access "approve"); use a token with one of those roles',
    );
    expect([anonymous, caller, callerList].map(({ status, body }) => ({ status, body }))).toEqual([
      {
        status: 401,
        body: refusal(
          "Unauthorized: send the header Authorization: Bearer <token> with a token from [gateway] tokens_env",
        ),
      },
      { status: 403, body: forbidden },
      { status: 403, body: forbidden },
    ]);
    expect(anonymous.headers["www-authenticate"]).toBe('Bearer realm="toolbus"');

    const answered = await send(inbox.url, {
      method: "POST",
      path,
      headers: bearer("alice-token"),
      body: { choice: "decline", by: "mallory" },
    });
    expect({ status: answered.status, body: answered.body }).toEqual({
      status: 200,
      body: { decision: "denied" },
    });
    await expect(inbox.decision).resolves.toMatchObject({ decision: "denied", source: "human" });
    await expect.poll(() => inbox.resolved.length, { timeout: 5_000 }).toBe(1);
    const db = new pg.Client({ connectionString: inbox.env.databaseUrl });
    await db.connect();
    const { rows } = await db
      .query<{ resolved_by: string }>("SELECT resolved_by FROM approval_requests WHERE request_id = $1", [
        inbox.pending.requestId,
      ])
      .finally(() => db.end());
    expect({ event: inbox.resolved[0], stored: rows }).toEqual({
      event: {
        requestId: inbox.pending.requestId,
        callId: inbox.pending.callId,
        decision: "denied",
        by: "alice",
      },
      stored: [{ resolved_by: "alice" }],
    });
    inbox.stop();
  });

  it("serves the inbox page without a token, with a CSP that forbids framing, and the probes to orchestrators", async () => {
    const inbox = await guardedInbox("standalone page");
    const [page, health, ready, readyWithToken, api] = await Promise.all([
      send(inbox.url, { path: "/approvals" }),
      send(inbox.url, { path: "/healthz", headers: { host: "10.0.0.7:8081" } }),
      send(inbox.url, { path: "/readyz", headers: { host: "10.0.0.7:8081" } }),
      send(inbox.url, { path: "/readyz", headers: { host: "10.0.0.7:8081", ...bearer("bob-token") } }),
      send(inbox.url, { path: "/v1/approvals", headers: bearer("alice-token") }),
    ]);
    expect([page.status, health.status, ready.status, readyWithToken.status, api.status]).toEqual([
      200, 200, 401, 200, 200,
    ]);
    expect(page.headers["content-security-policy"]).toMatch(
      /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-[A-Za-z0-9+/=]+'; connect-src 'self';.* frame-ancestors 'none'$/,
    );
    for (const answer of [page, api]) {
      expect({
        nosniff: answer.headers["x-content-type-options"],
        referrer: answer.headers["referrer-policy"],
        frames: answer.headers["x-frame-options"],
      }).toEqual({ nosniff: "nosniff", referrer: "no-referrer", frames: "DENY" });
    }
    expect(api.headers["content-security-policy"]).toBe("default-src 'none'; frame-ancestors 'none'");
    await send(inbox.url, {
      method: "POST",
      path: `/v1/approvals/${inbox.pending.requestId}`,
      headers: bearer("alice-token"),
      body: { choice: "allow" },
    });
    await inbox.decision;
    inbox.stop();
  });

  it("counts its event stream against the client's limit, and gives the slot back when the stream ends", async () => {
    const env = await testEnv("standalone streams");
    const service = await env.start({
      http: { host: "127.0.0.1", port: 0, principals: PRINCIPALS, maxStreamsPerClient: 1 },
    });
    const open = (signal: AbortSignal) =>
      fetch(`${service.httpUrl}/v1/approvals/events`, {
        headers: { authorization: "Bearer alice-token" },
        signal,
      });
    const first = new AbortController();
    const held = await open(first.signal);
    const refused = await open(new AbortController().signal);
    expect([held.status, refused.status, await refused.json()]).toEqual([
      200,
      429,
      {
        error: {
          code: "server_unavailable",
          message:
            "Too Many Requests: alice already has the most open event streams one client may hold (1, [gateway] max_streams_per_client); close one first",
          retryable: true,
        },
      },
    ]);
    first.abort();
    const again = new AbortController();
    await expect.poll(async () => (await open(again.signal)).status, { timeout: 5_000 }).toBe(200);
    again.abort();
  });

  it("refuses to start on every interface without tokens, unless allow_unauthenticated says so", async () => {
    const env = await testEnv("standalone bind");
    await expect(env.start({ http: { host: "0.0.0.0", port: 0 } })).rejects.toThrow(
      "Refusing to start the approvals inbox on 0.0.0.0 without bearer tokens: anyone who can reach that address could call tools and answer approvals. Set [gateway] tokens_env or [gateway.oauth], listen on 127.0.0.1, or set [gateway] allow_unauthenticated = true if something else guards it",
    );
    const allowed = await env.start({ http: { host: "0.0.0.0", port: 0, allowUnauthenticated: true } });
    expect(allowed.httpUrl).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
  });
});
