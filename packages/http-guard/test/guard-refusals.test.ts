/**
 * The guard's refusals in the REST shape: each carries a wire code, sent with the code's own HTTP
 * status (HTTP_STATUS_BY_CODE) or with the protocol's refusal that narrows it (HttpRefusal), never
 * a status of its own. An app that is built but never listens, driven with `inject`.
 */
import { HTTP_STATUS_BY_CODE, HttpRefusal, RETRYABLE_BY_DEFAULT } from "@toolbus/protocol";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { installHttpGuard, routeAccess, sendSlotRefusal, takeStreamSlot } from "../src/guard.js";

const PRINCIPALS = [
  { name: "alice", role: "approver" as const, token: "alice-token" },
  { name: "bob", role: "caller" as const, token: "bob-token" },
  { name: "carol", role: "caller" as const, token: "carol-token" },
];

const apps: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function guardedApp() {
  const app = Fastify();
  apps.push(app);
  installHttpGuard(app, {
    allowedHosts: ["localhost"],
    principals: PRINCIPALS,
    streams: { total: 2, perClient: 1 },
  });
  app.get("/v1/approvals", routeAccess("approve"), async () => ({ pending: [] }));
  // Takes a stream slot and keeps it, as an open event stream does.
  app.get("/v1/events", routeAccess("read"), async (request, reply) => {
    const slot = takeStreamSlot(request);
    if (!slot.ok) return sendSlotRefusal(reply, slot);
    return { open: true };
  });
  await app.ready();
  return app;
}

const as = (token: string) => ({ host: "localhost", authorization: `Bearer ${token}` });

/** What a refusal says, as status and code, with the code's default retryability. */
async function refusal(response: { statusCode: number; json(): unknown }) {
  const { error } = response.json() as {
    error: { code: keyof typeof RETRYABLE_BY_DEFAULT; retryable: boolean };
  };
  expect(error.retryable).toBe(RETRYABLE_BY_DEFAULT[error.code]);
  return { status: response.statusCode, code: error.code };
}

describe("the guard's refusals", () => {
  it("answer a missing token as unauthorized, at the code's own status", async () => {
    const app = await guardedApp();
    const response = await app.inject({
      method: "GET",
      url: "/v1/approvals",
      headers: { host: "localhost" },
    });
    expect(await refusal(response)).toEqual({
      status: HTTP_STATUS_BY_CODE.unauthorized,
      code: "unauthorized",
    });
  });

  it("answer a Host that is not allowed, and a role without the access, as forbidden", async () => {
    const app = await guardedApp();
    const badHost = await app.inject({
      method: "GET",
      url: "/v1/approvals",
      headers: { ...as("alice-token"), host: "evil.example.com" },
    });
    const wrongRole = await app.inject({ method: "GET", url: "/v1/approvals", headers: as("bob-token") });
    expect([await refusal(badHost), await refusal(wrongRole)]).toEqual([
      HttpRefusal.forbidden,
      HttpRefusal.forbidden,
    ]);
  });

  it("answer a client over its streams as too many, and a full process as server_unavailable", async () => {
    const app = await guardedApp();
    const open = (token: string) => app.inject({ method: "GET", url: "/v1/events", headers: as(token) });
    expect((await open("bob-token")).statusCode).toBe(200);
    const secondOfBob = await open("bob-token");
    expect((await open("alice-token")).statusCode).toBe(200);
    const thirdInAll = await open("carol-token");
    expect([await refusal(secondOfBob), await refusal(thirdInAll)]).toEqual([
      HttpRefusal.tooManyStreams,
      { status: HTTP_STATUS_BY_CODE.server_unavailable, code: "server_unavailable" },
    ]);
  });
});
