/**
 * The HTTP routes over a real approvals service on the bus: through `app.inject()` on an app that
 * never listens (as the gateway would mount them), and once for real, following the SSE stream.
 */
import { createLogger } from "@toolbus/bus";
import { type ApprovalRequest, createSubjects } from "@toolbus/protocol";
import { isolation } from "@toolbus/testkit";
import fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { buildApprovalsHttp } from "../../../src/adapters/http/approvals-http.js";
import { approvalsHttpOverBus } from "../../../src/adapters/http/approvals-over-bus.js";
import { decide, decideRequest, type TestEnv, testEnv, waitForPending } from "../../support.js";

const silent = createLogger({ service: "test", version: "1", level: "silent" });
const apps: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function injectable(env: TestEnv, prefix = env.prefix, options: { bodyLimit?: number } = {}) {
  const app = fastify(options);
  apps.push(app);
  await app.register(buildApprovalsHttp(approvalsHttpOverBus(env.client, createSubjects(prefix), silent)));
  return app;
}

describe("approvals HTTP routes", () => {
  it("list the waiting requests and resolve one, releasing the waiting call", async () => {
    const env = await testEnv("http inject");
    const service = await env.start();
    const app = await injectable(env);
    const request = decideRequest();
    const decision = decide(env.client, service.subjects, request);
    const pending = await waitForPending(env.client, service.subjects, request.callId);

    const listed = await app.inject({ method: "GET", url: "/v1/approvals" });
    expect({ status: listed.statusCode, body: listed.json() }).toEqual({
      status: 200,
      body: { pending: [pending] },
    });

    const resolved = await app.inject({
      method: "POST",
      url: `/v1/approvals/${pending.requestId}`,
      payload: { choice: "allow" },
    });
    expect({ status: resolved.statusCode, body: resolved.json() }).toEqual({
      status: 200,
      body: { decision: "approved" },
    });
    await expect(decision).resolves.toEqual({
      decision: "approved",
      source: "human",
      decidedBy: "user",
    });

    const again = await app.inject({
      method: "POST",
      url: `/v1/approvals/${pending.requestId}`,
      payload: { choice: "decline" },
    });
    expect({ status: again.statusCode, body: again.json() }).toEqual({
      status: 400,
      body: {
        error: {
          code: "bad_request",
          message: `approval request ${pending.requestId} was already resolved (approved); each request takes one answer`,
          retryable: false,
        },
      },
    });
  });

  it("answer 400 naming the field for a choice that is not one", async () => {
    const env = await testEnv("http bad choice");
    await env.start();
    const app = await injectable(env);
    for (const payload of [{ choice: "maybe" }, {}]) {
      const reply = await app.inject({
        method: "POST",
        url: "/v1/approvals/mcp_tool_call_approval_x",
        payload,
      });
      expect({
        status: reply.statusCode,
        code: reply.json().error.code,
        message: reply.json().error.message,
      }).toEqual({
        status: 400,
        code: "bad_request",
        message: expect.stringMatching(
          /^choice: .+; send \{"choice": "allow" \| "allow_session" \| "allow_always" \| "decline" \| "cancel"\}, and with allow_always optionally "grantScope": "requester" \(the default\) \| "everyone"$/,
        ),
      });
    }
  });

  it("answer 413 naming the limit for a body over it", async () => {
    const env = await testEnv("http body limit");
    const app = await injectable(env, env.prefix, { bodyLimit: 1024 });
    const reply = await app.inject({
      method: "POST",
      url: "/v1/approvals/mcp_tool_call_approval_x",
      payload: { choice: "allow", padding: "x".repeat(2048) },
    });
    expect({ status: reply.statusCode, body: reply.json() }).toEqual({
      status: 413,
      body: {
        error: {
          code: "payload_too_large",
          message: "the request body is over the limit of 1 KiB for one request; send a smaller request",
          retryable: false,
        },
      },
    });
  });

  it("answer 503 when no approvals service is on the bus", async () => {
    const env = await testEnv("http no service");
    const app = await injectable(env, isolation("nobody").prefix);
    const reply = await app.inject({ method: "GET", url: "/v1/approvals" });
    expect({ status: reply.statusCode, body: reply.json() }).toEqual({
      status: 503,
      body: {
        error: {
          code: "server_unavailable",
          message: expect.stringMatching(
            /^no service answers on t_nobody_\w+\.approvals\.list; start the service that serves it/,
          ),
          retryable: true,
        },
      },
    });
  });

  it("serve the inbox page", async () => {
    const env = await testEnv("http page");
    const app = await injectable(env);
    const page = await app.inject({ method: "GET", url: "/approvals" });
    expect({
      status: page.statusCode,
      type: page.headers["content-type"],
      title: /<title>(.*)<\/title>/.exec(page.body)?.[1],
      // Read with fetch, so the gateway's bearer token can go with it.
      usesStream: page.body.includes('api(API + "/events", { headers: { accept: "text/event-stream" } })'),
    }).toEqual({
      status: 200,
      type: "text/html; charset=utf-8",
      title: "toolbus · approvals",
      usesStream: true,
    });
  });

  it("answer the liveness and readiness probes while connected to the bus", async () => {
    const env = await testEnv("http probes");
    const service = await env.start({ http: { port: 0 } });
    const probe = async (path: string) => {
      const response = await fetch(`${service.httpUrl}${path}`);
      return { status: response.status, body: await response.json() };
    };
    expect([await probe("/healthz"), await probe("/readyz")]).toEqual([
      { status: 200, body: { status: "ok" } },
      { status: 200, body: { status: "ready", bus: true } },
    ]);
  });

  it("on the service's own port answer a click in that process, even while it takes no more bus requests", async () => {
    const env = await testEnv("http own resolve");
    const service = await env.start({ http: { port: 0 } });
    const request = decideRequest();
    const decision = decide(env.client, service.subjects, request);
    const pending = await waitForPending(env.client, service.subjects, request.callId);
    // No replica serves approvals.resolve on the bus now; the waiting decide stays in flight.
    const draining = service.bus.drain({ graceMs: 60_000 });
    const resolved = await fetch(`${service.httpUrl}/v1/approvals/${pending.requestId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ choice: "allow" }),
    });
    expect({ status: resolved.status, body: await resolved.json() }).toEqual({
      status: 200,
      body: { decision: "approved" },
    });
    await expect(decision).resolves.toEqual({
      decision: "approved",
      source: "human",
      decidedBy: "anonymous",
    });
    await draining;
  });

  it("page the list: limit and the previous page's cursor, oldest first, and a clear 400 past the limit", async () => {
    const env = await testEnv("http paging");
    const service = await env.start();
    const app = await injectable(env);
    const calls = [decideRequest(), decideRequest(), decideRequest()];
    const decisions = [];
    const pending: ApprovalRequest[] = [];
    // One at a time, so their order (by createdAt) is known.
    for (const call of calls) {
      decisions.push(decide(env.client, service.subjects, call));
      pending.push(await waitForPending(env.client, service.subjects, call.callId));
    }
    const first = await app.inject({ method: "GET", url: "/v1/approvals?limit=2" });
    const firstBody = first.json<{ pending: ApprovalRequest[]; nextCursor?: string }>();
    const second = await app.inject({
      method: "GET",
      url: `/v1/approvals?limit=2&cursor=${encodeURIComponent(firstBody.nextCursor ?? "")}`,
    });
    const tooMany = await app.inject({ method: "GET", url: "/v1/approvals?limit=501" });
    const forged = await app.inject({ method: "GET", url: "/v1/approvals?cursor=not-a-cursor" });
    expect({
      first: firstBody.pending,
      hasCursor: typeof firstBody.nextCursor === "string",
      second: second.json(),
      tooMany: [tooMany.statusCode, tooMany.json()],
      forged: [forged.statusCode, forged.json()],
    }).toEqual({
      first: pending.slice(0, 2),
      hasCursor: true,
      second: { pending: pending.slice(2) },
      tooMany: [
        400,
        {
          error: {
            code: "bad_request",
            message:
              "limit: Too big: expected number to be <=500; page with limit (1 to 500) and the nextCursor of the previous page",
            retryable: false,
          },
        },
      ],
      forged: [
        400,
        {
          error: {
            code: "bad_request",
            message:
              "cursor: not a cursor of approvals.list; pass the nextCursor of the previous page, or none for the first page",
            retryable: false,
          },
        },
      ],
    });
    for (const request of pending) {
      await app.inject({
        method: "POST",
        url: `/v1/approvals/${request.requestId}`,
        payload: { choice: "allow" },
      });
    }
    await Promise.all(decisions);
  });

  it("stream a snapshot, then pending and resolved events, to a real HTTP client", async () => {
    const env = await testEnv("http sse");
    const service = await env.start({ http: { port: 0 } });
    expect(service.httpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${service.httpUrl}/v1/approvals/events`);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    const events = sseEvents(response);

    expect(await events.next()).toEqual({ event: "snapshot", data: { pending: [] } });
    const request = decideRequest();
    const decision = decide(env.client, service.subjects, request);
    const pending = (await events.next()) as { event: string; data: ApprovalRequest };
    expect(pending).toEqual({
      event: "pending",
      data: await waitForPending(env.client, service.subjects, request.callId),
    });

    const resolved = await fetch(`${service.httpUrl}/v1/approvals/${pending.data.requestId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ choice: "cancel" }),
    });
    expect(await resolved.json()).toEqual({ decision: "abort" });
    expect(await events.next()).toEqual({
      event: "resolved",
      // No tokens on this server: the click is recorded as anonymous's.
      data: { requestId: pending.data.requestId, callId: request.callId, decision: "abort", by: "anonymous" },
    });
    await expect(decision).resolves.toEqual({
      decision: "abort",
      source: "human",
      decidedBy: "anonymous",
      message: "user cancelled MCP tool call",
    });
    // Stopping the service ends the stream rather than waiting for the client to leave.
    await service.stop();
    await expect(events.next()).rejects.toThrow("the SSE stream ended");
  });
});

/** Reads `event:`/`data:` pairs off an SSE response, one per `next()`. */
function sseEvents(response: Response): { next(): Promise<{ event: string; data: unknown }> } {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return {
    async next() {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event !== undefined && data !== undefined) return { event, data: JSON.parse(data) };
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error("the SSE stream ended");
        buffer += value;
      }
    },
  };
}
