/**
 * The approvals service on the embedded PGlite, started as `pnpm start` starts it: an approval
 * given over the bus or the HTTP API answers the waiting call at once. PGlite served over its
 * socket passes no NOTIFY between connections, so this holds only because the replica that
 * records a decision wakes its own waiters.
 */
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ApprovalsService, startApprovalsService } from "@toolbus/approvals";
import { type Bus, connectBus, createLogger } from "@toolbus/bus";
import {
  type ApprovalDecideRequest,
  ApprovalDecideResultSchema,
  type ApprovalRequest,
  ApprovalRequestSchema,
  ApprovalResolveResultSchema,
} from "@toolbus/protocol";
import { cleanupJetStream, isolation, provisionPrefix } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, ensureDatabase } from "../src/embedded-postgres.js";

const { natsUrl } = provided();
const { prefix } = isolation("pglite_wake");
const logger = createLogger({ service: "pglite-test", version: "test", level: "silent" });
let dir: string;
let database: Database;
let approvals: ApprovalsService;
let approvalsBus: Bus;
let client: Bus;
const announced: ApprovalRequest[] = [];

beforeAll(async () => {
  await provisionPrefix(natsUrl, prefix);
  dir = await mkdtemp(join(tmpdir(), "toolbus-pglite-"));
  database = await ensureDatabase({
    dataDir: join(dir, "pglite"),
    socketDir: join(dir, "state", "postgres"),
  });
  approvalsBus = await connectBus({ natsUrl, service: { name: "approvals", version: "1.0.0" }, logger });
  approvals = await startApprovalsService({
    bus: approvalsBus,
    config: {
      databaseUrl: database.url,
      prefix,
      http: { port: 0 },
      // Far longer than the test: a decide that has to re-read to notice its answer never does.
      pollIntervalMs: 600_000,
    },
    logger,
  });
  client = await connectBus({ natsUrl, service: { name: "pglite-test", version: "1.0.0" }, logger });
  client.nc.subscribe(approvals.subjects.approvalsPending, {
    callback: (_error, msg) => void announced.push(ApprovalRequestSchema.parse(msg.json())),
  });
  await client.nc.flush();
}, 120_000);

afterAll(async () => {
  await client?.close();
  await approvals?.drain();
  await approvals?.stop();
  await approvalsBus?.close();
  await database?.stop();
  await cleanupJetStream(natsUrl, prefix);
  await rm(dir, { recursive: true, force: true });
});

function decideRequest(callId: string): ApprovalDecideRequest {
  return {
    callId,
    threadId: "thread-1",
    server: "docs",
    tool: "search",
    hookName: "mcp__docs__search",
    arguments: { q: "release notes" },
    fingerprint: "a".repeat(64),
    catalogRevision: 1,
  };
}

/** Sends decide for a call nobody has approved, and answers it once it waits for a human. */
async function waitingDecide(callId: string) {
  const decision = client.request(
    approvals.subjects.approvalsDecide,
    decideRequest(callId),
    ApprovalDecideResultSchema,
    {
      timeoutMs: 30_000,
    },
  );
  await expect.poll(() => announced.some((request) => request.callId === callId)).toBe(true);
  const request = announced.find((pending) => pending.callId === callId)!;
  return { decision, request };
}

describe("the embedded PGlite's address", () => {
  it("is a Unix socket in a directory only toolbus's user may enter, not a TCP port anyone local can log in to", async () => {
    const socketDir = join(dir, "state", "postgres");
    expect(database.url).toBe(`postgres://postgres@localhost/postgres?host=${encodeURIComponent(socketDir)}`);
    expect((await stat(socketDir)).mode & 0o777).toBe(0o700);
    expect((await stat(join(socketDir, ".s.PGSQL.5432"))).isSocket()).toBe(true);
  });
});

describe("approvals on the embedded PGlite", () => {
  it("answers a waiting call as soon as it is approved over the bus (approvals.resolve)", async () => {
    const { decision, request } = await waitingDecide("pglite-bus");
    await expect(
      client.request(
        approvals.subjects.approvalsResolve,
        { requestId: request.requestId, choice: "allow" },
        ApprovalResolveResultSchema,
      ),
    ).resolves.toEqual({ decision: "approved" });
    await expect(decision).resolves.toEqual({ decision: "approved", source: "human", decidedBy: "user" });
  });

  it("answers a waiting call as soon as it is declined over the HTTP API", async () => {
    const { decision, request } = await waitingDecide("pglite-http");
    const answered = await fetch(`${approvals.httpUrl}/v1/approvals/${request.requestId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ choice: "decline" }),
    });
    expect([answered.status, await answered.json()]).toEqual([200, { decision: "denied" }]);
    await expect(decision).resolves.toEqual({
      decision: "denied",
      source: "human",
      message: "user rejected MCP tool call",
      decidedBy: "anonymous",
    });
  });
});
