/**
 * Shared set-up for the approvals integration tests: an isolated prefix (its own subjects,
 * grants bucket and NOTIFY channel) and Postgres schema per test, services started on them and
 * stopped afterwards, a client bus for requests, and a decide request builder. The prefix is
 * provisioned first, as `toolbus provision` does before any service runs.
 */
import { chmod, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Bus, connectBus, createLogger } from "@toolbus/bus";
import {
  type ApprovalDecideRequest,
  type ApprovalDecideResult,
  ApprovalDecideResultSchema,
  type ApprovalRequest,
  ApprovalResolveResultSchema,
  ApprovalsListResultSchema,
  type Subjects,
} from "@toolbus/protocol";
import { cleanupJetStream, isolation, provisionPrefix, withPgSchema } from "@toolbus/testkit";
import { provided } from "@toolbus/testkit/provided";
import { afterEach, expect } from "vitest";
import { type ApprovalsService, startApprovalsService } from "../src/approvals-service.js";
import type { ApprovalsServiceConfigInput } from "../src/config.js";

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

export interface TestEnv {
  prefix: string;
  databaseUrl: string;
  natsUrl: string;
  client: Bus;
  /**
   * Starts a replica on this test's prefix and schema, on a bus of its own; `http` is off unless
   * asked for. Its `stop` drains it, stops it and closes its bus, as a process's shutdown does.
   */
  start(
    overrides?: Partial<ApprovalsServiceConfigInput>,
  ): Promise<ApprovalsService & { bus: Bus; lines: LogLine[] }>;
}

const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

export async function testEnv(name: string): Promise<TestEnv> {
  const { natsUrl, databaseUrl } = provided();
  const { prefix } = isolation(name);
  const schema = await withPgSchema(databaseUrl, name);
  cleanups.push(() => schema.drop());
  cleanups.push(() => cleanupJetStream(natsUrl, prefix));
  // The prefix's streams and buckets, made as `toolbus provision` makes them before any service.
  await provisionPrefix(natsUrl, prefix);
  const client = await connectBus({
    natsUrl,
    service: { name: "approvals-test-client", version: "1.0.0" },
    logger: createLogger({ service: "approvals-test-client", version: "1.0.0", level: "silent" }),
  });
  cleanups.push(() => client.close());
  const running = new Set<ApprovalsService>();
  cleanups.push(async () => {
    for (const service of running) await service.stop();
  });
  return {
    prefix,
    databaseUrl: schema.url,
    natsUrl,
    client,
    async start(overrides = {}) {
      const lines: LogLine[] = [];
      const logger = createLogger({
        service: "approvals",
        version: "test",
        level: "debug",
        destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
      });
      const bus = await connectBus({ natsUrl, service: { name: "approvals", version: "1.0.0" }, logger });
      const service = await startApprovalsService({
        bus,
        config: { databaseUrl: schema.url, prefix, http: false, shutdownGraceMs: 2_000, ...overrides },
        logger,
      }).catch(async (error: unknown) => {
        await bus.close();
        throw error;
      });
      running.add(service);
      const stop = service.stop;
      return Object.assign(service, {
        bus,
        lines,
        stop: async () => {
          running.delete(service);
          await service.drain();
          await stop();
          await bus.close();
        },
      });
    },
  };
}

export const FINGERPRINT = "a".repeat(64);
export const OTHER_FINGERPRINT = "b".repeat(64);

/** A decide request for `docs/search` with no annotations (so mode `auto` asks a human). */
export function decideRequest(overrides: Partial<ApprovalDecideRequest> = {}): ApprovalDecideRequest {
  return {
    callId: `call-${Math.random().toString(36).slice(2, 10)}`,
    threadId: "thread-1",
    server: "docs",
    tool: "search",
    hookName: "mcp__docs__search",
    arguments: { q: "release notes" },
    fingerprint: FINGERPRINT,
    catalogRevision: 7,
    ...overrides,
  };
}

export function decide(client: Bus, subjects: Subjects, request: ApprovalDecideRequest, timeoutMs = 20_000) {
  return client.request(subjects.approvalsDecide, request, ApprovalDecideResultSchema, { timeoutMs });
}

export async function listPending(client: Bus, subjects: Subjects): Promise<ApprovalRequest[]> {
  return (await client.request(subjects.approvalsList, {}, ApprovalsListResultSchema)).pending;
}

/** Polls `list` until the call's request shows up (a decide is waiting on it). */
export async function waitForPending(
  client: Bus,
  subjects: Subjects,
  callId: string,
): Promise<ApprovalRequest> {
  let found: ApprovalRequest | undefined;
  await expect
    .poll(
      async () => {
        found = (await listPending(client, subjects)).find((request) => request.callId === callId);
        return found !== undefined;
      },
      { timeout: 10_000, interval: 50 },
    )
    .toBe(true);
  return found as ApprovalRequest;
}

/** Writes an executable shell script to a fresh temp dir and answers its path. */
export async function hookScript(name: string, body: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "toolbus-hooks-"));
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\n${body}\n`);
  await chmod(path, 0o755);
  return path;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export type Probe = { decided: ApprovalDecideResult } | { prompted: string[] };

/**
 * Sends a decide and reports whether it was decided at once or put to a human (with which option
 * ids). A prompted call is then allowed, so nothing is left waiting.
 */
export async function probe(client: Bus, subjects: Subjects, request: ApprovalDecideRequest): Promise<Probe> {
  let onPending: (request: ApprovalRequest) => void = () => {};
  const prompted = new Promise<ApprovalRequest>((resolve) => {
    onPending = resolve;
  });
  const sub = client.nc.subscribe(subjects.approvalsPending, {
    callback: (_err, msg) => {
      const body = msg.json<ApprovalRequest>();
      if (body.callId === request.callId) onPending(body);
    },
  });
  await client.nc.flush();
  try {
    const decision = decide(client, subjects, request);
    const first = await Promise.race([
      decision.then((result) => ({ decided: result }) as const),
      prompted.then((pending) => ({ pending }) as const),
    ]);
    if ("decided" in first) return first;
    await client.request(
      subjects.approvalsResolve,
      { requestId: first.pending.requestId, choice: "allow" },
      ApprovalResolveResultSchema,
    );
    await decision;
    return { prompted: first.pending.options.map((option) => option.id) };
  } finally {
    sub.unsubscribe();
  }
}
