/**
 * The chaos scenarios' client and bookkeeping: calls at a steady rate through the gateways' REST
 * API, each with its own callId and retried with that same callId (on the other gateway) while
 * it has no answer; then what the client saw is set against what the server executed and what
 * the events stream holds.
 */
import { randomUUID } from "node:crypto";
import { type JetStreamClient, jetstream } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";

export interface LoadOptions {
  /** `http://127.0.0.1:<port>` of each gateway. */
  gateways: readonly string[];
  /** The tool's name as the dispatcher knows it (its flat name). */
  tool: string;
  /** Calls started per second. */
  rate: number;
  durationMs: number;
  /** How long one attempt may take before the client tries again (same callId). */
  attemptTimeoutMs: number;
  /** How long a call may go unanswered, retries included, before it counts as lost. */
  giveUpMs: number;
  /** Calls in flight at most: the client waits instead of piling up. */
  maxInFlight: number;
  /** Told when the load has run `atMs`: the fault, while calls flow. */
  fault?: { atMs: number; inject(): Promise<void> };
}

export interface CallRecord {
  callId: string;
  startedAt: number;
  attempts: number;
  /** `completed`, another reply status (an answer that is an error), or `lost` (no answer). */
  outcome: string;
  answeredAt?: number;
  /** What the last unanswered attempt got (an HTTP status and body, or the error). */
  lastProblem?: string;
}

export interface LoadResult {
  calls: CallRecord[];
  faultAt?: number;
}

/** Runs the load; resolves when every call has an answer or was given up on. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const calls: CallRecord[] = [];
  const running = new Set<Promise<void>>();
  const started = Date.now();
  let faultAt: number | undefined;
  let fault: Promise<void> | undefined;
  const interval = 1_000 / options.rate;
  // Calls are due every `interval` from the start, and as many as fit in `durationMs`, exactly.
  for (let n = 0; n * interval < options.durationMs; n++) {
    const due = started + n * interval;
    if (due > Date.now()) await sleep(due - Date.now());
    if (options.fault && fault === undefined && Date.now() - started >= options.fault.atMs) {
      faultAt = Date.now();
      fault = options.fault.inject();
    }
    while (running.size >= options.maxInFlight) await Promise.race(running);
    const record: CallRecord = {
      callId: `chaos-${randomUUID()}`,
      startedAt: Date.now(),
      attempts: 0,
      outcome: "lost",
    };
    calls.push(record);
    const call = callUntilAnswered(options, record, n).finally(() => running.delete(call));
    running.add(call);
  }
  await Promise.all(running);
  await fault;
  return { calls, ...(faultAt !== undefined ? { faultAt } : {}) };
}

/** One call, sent again with its callId on the next gateway while it has no answer. */
async function callUntilAnswered(options: LoadOptions, record: CallRecord, n: number): Promise<void> {
  const deadline = record.startedAt + options.giveUpMs;
  let gateway = n % options.gateways.length;
  while (Date.now() < deadline) {
    record.attempts++;
    try {
      const response = await fetch(`${options.gateways[gateway]}/v1/calls`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ callId: record.callId, tool: options.tool, arguments: JSON.stringify({ n }) }),
        signal: AbortSignal.timeout(Math.min(options.attemptTimeoutMs, Math.max(1, deadline - Date.now()))),
      });
      // 5xx: toolbus could not answer this time (a node or a service gone); the callId makes a resend safe.
      if (response.status < 500) {
        const reply = (await response.json()) as { status?: string; error?: string };
        record.outcome = reply.status ?? `http ${response.status}`;
        if (reply.error !== undefined) record.lastProblem = reply.error.slice(0, 300);
        record.answeredAt = Date.now();
        return;
      }
      record.lastProblem = `${response.status} ${(await response.text()).slice(0, 200)}`;
    } catch (error) {
      // No answer in time, or the gateway is gone: the next gateway, same callId.
      record.lastProblem = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    }
    gateway = (gateway + 1) % options.gateways.length;
    await sleep(250);
  }
}

/** How many begin and end events the stream holds for one callId, and when it stored the first end. */
export interface CallEventCounts {
  begin: number;
  end: number;
  /** Epoch milliseconds. */
  endStoredAt?: number;
}

/** How long reading the events may keep failing before the scenario fails with its error. */
const EVENTS_READ_TIMEOUT_MS = 30_000;

/**
 * Begin and end events per callId in the events stream (read with an all-seeing connection),
 * read again from the start while JetStream does not answer: right after a node's restart the
 * stream's reader can get "no responders" until its consumer has a leader.
 */
export async function callEvents(
  admin: NatsConnection,
  stream: string,
  prefix: string,
): Promise<Map<string, CallEventCounts>> {
  const deadline = Date.now() + EVENTS_READ_TIMEOUT_MS;
  for (;;) {
    try {
      return await readCallEvents(admin, stream, prefix);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

async function readCallEvents(
  admin: NatsConnection,
  stream: string,
  prefix: string,
): Promise<Map<string, CallEventCounts>> {
  const js: JetStreamClient = jetstream(admin);
  const consumer = await js.consumers.get(stream, { filter_subjects: `${prefix}.events.call.>` });
  const counts = new Map<string, CallEventCounts>();
  try {
    for (;;) {
      const batch = await consumer.fetch({ max_messages: 1_000, expires: 2_000 });
      let received = 0;
      let pending = 0;
      for await (const message of batch) {
        received++;
        pending = message.info.pending;
        const { callId } = message.json<{ callId: string }>();
        const entry = counts.get(callId) ?? { begin: 0, end: 0 };
        if (message.subject.endsWith(".begin")) entry.begin++;
        else {
          entry.end++;
          entry.endStoredAt ??= message.info.timestampNanos / 1e6;
        }
        counts.set(callId, entry);
      }
      if (received === 0 || pending === 0) break;
    }
  } finally {
    await consumer.delete().catch(() => undefined);
  }
  return counts;
}

export interface ScenarioRow {
  scenario: string;
  sent: number;
  answered: number;
  errors: number;
  executed: number;
  lost: number;
  "executed twice": number;
  "events missing": number;
  "recovery s": number | string;
  /** What a lost call last got (else what an errored one was told), when there was one. */
  note?: string;
}

/**
 * The scenario's row: `executions` are the callIds the server ran (one per execution).
 * Recovery: from the fault to the first call started after it that completed on its first try.
 */
export function tally(
  scenario: string,
  load: LoadResult,
  executions: readonly string[],
  events: ReadonlyMap<string, CallEventCounts>,
): ScenarioRow {
  const mine = new Set(load.calls.map((call) => call.callId));
  const runs = new Map<string, number>();
  for (const callId of executions) if (mine.has(callId)) runs.set(callId, (runs.get(callId) ?? 0) + 1);
  const eventsMissing = [...runs.keys()].filter((callId) => {
    const seen = events.get(callId);
    return seen?.begin !== 1 || seen.end !== 1;
  }).length;
  const recovered =
    load.faultAt === undefined
      ? undefined
      : load.calls.find(
          (call) =>
            call.startedAt >= (load.faultAt as number) && call.outcome === "completed" && call.attempts === 1,
        );
  const lostCall =
    load.calls.find((call) => call.outcome === "lost") ??
    load.calls.find((call) => call.outcome !== "completed");
  return {
    scenario,
    sent: load.calls.length,
    answered: load.calls.filter((call) => call.outcome === "completed").length,
    errors: load.calls.filter((call) => call.outcome !== "completed" && call.outcome !== "lost").length,
    executed: runs.size,
    lost: load.calls.filter((call) => call.outcome === "lost").length,
    "executed twice": [...runs.values()].filter((count) => count > 1).length,
    "events missing": eventsMissing,
    "recovery s":
      recovered === undefined
        ? load.faultAt === undefined
          ? "—"
          : "never"
        : Math.round(((recovered.answeredAt as number) - (load.faultAt as number)) / 100) / 10,
    ...(lostCall ? { note: `${lostCall.callId}: ${lostCall.lastProblem ?? "no attempt answered"}` } : {}),
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
