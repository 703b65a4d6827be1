/**
 * Session records in the KV bucket `<prefix>_gateway_sessions` (entries expire after the idle
 * TTL unless touched), the `<prefix>.gateway.session_closed` broadcast that tells every replica
 * to drop a session a client ended with DELETE, and `<prefix>.gateway.responses`, which carries
 * a client's answers to the replica that asked (when they reach another one), a 2026-07-28
 * client's answers to elicitations handed back to it among them. The same bucket
 * binds each thread a client named to the principal that named it (`thread.<sha256 of the id>`:
 * the principal's name), so no other principal can use its session grants. It also keeps the
 * calls handed back to 2026-07-28 clients (`held.<key>`, core/held-calls.ts) until they resume.
 */
import { createHash, randomBytes } from "node:crypto";
import type { KV } from "@nats-io/kv";
import type { Subscription } from "@nats-io/transport-node";
import type { Bus, Logger } from "@toolbus/bus";
import { CallInputResultSchema, internalSubjects } from "@toolbus/protocol";
import type { z } from "zod";
import {
  belongsTo,
  type HeldPrompt,
  HeldPromptSchema,
  type HeldQuestion,
  HeldQuestionSchema,
} from "../../core/held-calls.js";
import { SESSION_ID_PATTERN, type SessionRecord, SessionRecordSchema } from "../../core/session-record.js";
import type { ThreadClaim } from "../../core/session-threads.js";
import { type TaskRecord, TaskRecordSchema } from "../../core/tasks.js";

/** A task's id: 24 random bytes, base64url. */
const TASK_ID_PATTERN = /^[A-Za-z0-9_-]{32}$/;

export interface SessionStore {
  get(sessionId: string): Promise<SessionRecord | undefined>;
  /** Fire and forget: a failed write is logged, the session goes on locally. */
  put(record: SessionRecord): void;
  /** Deletes the record and tells the other replicas. */
  remove(sessionId: string): void;
  /**
   * Whether the session expired: no record, or none stored within the idle TTL. Undefined when
   * the store could not say.
   */
  expired(sessionId: string): Promise<boolean | undefined>;
  /** Calls `onClosed` when any replica removed a session. */
  onClosed(listener: (sessionId: string) => void): void;
  /** Passes a client's answers to whichever replica asked the question. */
  forwardResponses(sessionId: string, messages: readonly unknown[]): void;
  onResponses(listener: (sessionId: string, messages: unknown[]) => void): void;
  /**
   * Binds a thread a client named to `principal`, or says whose it is (core/session-threads.ts).
   * A binding lasts the idle TTL, renewed by the calls on it. Before a new one, `free` must end
   * the thread's grants (false: it could not, the thread stays unbound and `unavailable`).
   */
  claimThread(threadId: string, principal: string, free: () => Promise<boolean>): Promise<ThreadClaim>;
  /** Keeps a question handed back to a client; returns its key (unguessable: the client's `requestState`). */
  holdQuestion(question: HeldQuestion): Promise<string>;
  /**
   * The question under `key`, taken (it resumes once) when `asker` (principal and view) may take
   * it and `answers` says the client's answers fit it (else it stays, for a better answer);
   * otherwise why not, in a sentence for the client.
   */
  takeQuestion(
    key: string,
    asker: { principal: string; view: string | undefined },
    answers: (question: HeldQuestion) => { ok: true } | { ok: false; message: string },
  ): Promise<{ ok: true; question: HeldQuestion } | { ok: false; message: string }>;
  /** Keeps a prompt whose server asked first (`HeldPrompt`); returns its key, as `holdQuestion`. */
  holdPrompt(prompt: HeldPrompt): Promise<string>;
  /** The prompt under `key`, taken as `takeQuestion` takes a question. */
  takePrompt(
    key: string,
    asker: { principal: string; view: string | undefined },
    answers: (prompt: HeldPrompt) => { ok: true } | { ok: false; message: string },
  ): Promise<{ ok: true; prompt: HeldPrompt } | { ok: false; message: string }>;
  /** Keeps a new task (core/tasks.ts) before its handle is returned; returns its id (unguessable). */
  createTask(record: TaskRecord): Promise<string>;
  /**
   * The task, when `asker` may see it (its own principal, at the same endpoint) and it has not
   * expired (`ttlMs` after it was made); to anyone else it does not exist.
   */
  readTask(
    taskId: string,
    asker: { principal: string; view: string | undefined },
  ): Promise<TaskRecord | undefined>;
  /** Changes the task as `change` says, against concurrent changes; false when it is gone. */
  updateTask(taskId: string, change: (record: TaskRecord) => TaskRecord): Promise<boolean>;
  /** Passes a client's answers to a handed-back round of questions to whichever replica waits for them. */
  forwardAnswer(callId: string, relayId: string, responses: Record<string, unknown>): void;
  onAnswer(listener: (callId: string, relayId: string, responses: Record<string, unknown>) => void): void;
  stop(): void;
}

export async function openSessionStore(deps: {
  bus: Bus;
  prefix: string;
  ttlMs: number;
  /** How long a question handed back to a client waits for its answer. */
  answerTimeoutMs: number;
  /** How long a task is kept (the call ledger keeps its reply as long). */
  taskTtlMs: number;
  logger: Logger;
}): Promise<SessionStore> {
  const { bus, logger } = deps;
  const names = internalSubjects(deps.prefix);
  const kv: KV = await bus.kv(names.kv.gatewaySessions);
  const listeners: Array<(sessionId: string) => void> = [];
  const responseListeners: Array<(sessionId: string, messages: unknown[]) => void> = [];
  /** Keeps `value` under an unguessable key (24 random bytes), which it returns. */
  const hold = async (kind: "held" | "prompt", value: HeldQuestion | HeldPrompt): Promise<string> => {
    const key = randomBytes(24).toString("base64url");
    await kv.create(`${kind}.${key}`, JSON.stringify(value));
    return key;
  };
  /**
   * What `key` holds, taken once (a CAS delete: a replay, or a race between replicas, finds it
   * gone), only by its own principal at the same view, within `answerTimeoutMs`, and only with
   * answers that fit it (else it stays, for a better answer).
   */
  const take = async <T extends { principal: string; view?: string | undefined }>(
    kind: "held" | "prompt",
    key: string,
    schema: z.ZodType<T>,
    asker: { principal: string; view: string | undefined },
    answers: (value: T) => { ok: true } | { ok: false; message: string },
    again: string,
  ): Promise<{ ok: true; value: T } | { ok: false; message: string }> => {
    const gone = {
      ok: false as const,
      message: `Invalid params: requestState names nothing waiting for this client's answer (answered already, expired after ${Math.round(deps.answerTimeoutMs / 1000)} s, or not this client's); ${again}`,
    };
    if (!/^[A-Za-z0-9_-]{32}$/.test(key)) return gone;
    const entry = await kv.get(`${kind}.${key}`);
    if (entry?.operation !== "PUT" || entry.created.getTime() + deps.answerTimeoutMs <= Date.now())
      return gone;
    const parsed = schema.safeParse(entry.json());
    if (!parsed.success || !belongsTo(parsed.data, asker)) return gone;
    const fits = answers(parsed.data);
    if (!fits.ok) return fits;
    const taken = await kv.delete(`${kind}.${key}`, { previousSeq: entry.revision }).then(
      () => true,
      () => false,
    );
    return taken ? { ok: true, value: parsed.data } : gone;
  };
  const answerListeners: Array<
    (callId: string, relayId: string, responses: Record<string, unknown>) => void
  > = [];
  const subscriptions: Subscription[] = [
    bus.nc.subscribe(names.gatewaySessionClosed, {
      callback: (error, msg) => {
        if (error) return;
        const sessionId = msg.string();
        for (const listener of listeners) listener(sessionId);
      },
    }),
    bus.nc.subscribe(names.gatewayResponses, {
      callback: (error, msg) => {
        if (error) return;
        try {
          const { sessionId, messages, held } = msg.json<{
            sessionId?: unknown;
            messages?: unknown;
            held?: { callId?: unknown; relayId?: unknown; answer?: unknown };
          }>();
          // The answers to a round handed back to a 2026-07-28 client (no session).
          if (held !== undefined) {
            const answer = CallInputResultSchema.shape.responses.safeParse(held.answer);
            const { callId, relayId } = held;
            if (!answer.success || typeof callId !== "string" || typeof relayId !== "string") return;
            for (const listener of answerListeners) listener(callId, relayId, answer.data);
            return;
          }
          if (typeof sessionId !== "string" || !Array.isArray(messages)) return;
          for (const listener of responseListeners) listener(sessionId, messages);
        } catch {
          logger.warn({ subject: msg.subject }, "ignored a malformed forwarded response");
        }
      },
    }),
  ];
  // The bucket's TTL (the provisioner's) removes a record late, or much later than this
  // gateway's idle TTL: a record's age decides, not its presence.
  const idleTooLong = (entry: { created: Date }) => entry.created.getTime() + deps.ttlMs <= Date.now();
  return {
    async get(sessionId) {
      if (!SESSION_ID_PATTERN.test(sessionId)) return undefined;
      try {
        const entry = await kv.get(sessionId);
        if (entry?.operation !== "PUT" || idleTooLong(entry)) return undefined;
        const parsed = SessionRecordSchema.safeParse(entry.json());
        return parsed.success ? parsed.data : undefined;
      } catch (err) {
        logger.warn({ err, sessionId }, "could not read a session record");
        return undefined;
      }
    },
    put(record) {
      kv.put(record.sessionId, JSON.stringify(record)).catch((err: unknown) => {
        logger.warn({ err, sessionId: record.sessionId }, "could not store a session record");
      });
    },
    async expired(sessionId) {
      try {
        const entry = await kv.get(sessionId);
        if (entry?.operation !== "PUT") return true;
        return idleTooLong(entry);
      } catch (err) {
        logger.warn({ err, sessionId }, "could not read a session record");
        return undefined;
      }
    },
    remove(sessionId) {
      kv.delete(sessionId).catch((err: unknown) => {
        logger.warn({ err, sessionId }, "could not delete a session record");
      });
      bus.nc.publish(names.gatewaySessionClosed, sessionId);
    },
    onClosed(listener) {
      listeners.push(listener);
    },
    forwardResponses(sessionId, messages) {
      bus.nc.publish(names.gatewayResponses, JSON.stringify({ sessionId, messages }));
    },
    onResponses(listener) {
      responseListeners.push(listener);
    },
    async claimThread(threadId, principal, free) {
      const key = `thread.${createHash("sha256").update(threadId).digest("hex")}`;
      try {
        // Twice at most: a create that lost a race reads the winner's binding.
        for (let attempt = 0; attempt < 2; attempt += 1) {
          const entry = await kv.get(key);
          if (entry?.operation === "PUT") {
            if (entry.string() !== principal) return "taken";
            // Renewed a few times per TTL; `update` never overwrites a binding made since.
            if (Date.now() - entry.created.getTime() >= deps.ttlMs / 3) {
              await kv.update(key, principal, entry.revision).catch(() => undefined);
            }
            return "held";
          }
          if (!(await free())) return "unavailable";
          const created = await kv.create(key, principal).then(
            () => true,
            () => false,
          );
          if (created) return "claimed";
        }
        return "unavailable";
      } catch (err) {
        logger.warn({ err }, "could not read or write a thread's binding to its principal");
        return "unavailable";
      }
    },
    async createTask(record) {
      const taskId = randomBytes(24).toString("base64url");
      await kv.create(`task.${taskId}`, JSON.stringify(record));
      return taskId;
    },
    async readTask(taskId, asker) {
      if (!TASK_ID_PATTERN.test(taskId)) return undefined;
      const entry = await kv.get(`task.${taskId}`);
      if (entry?.operation !== "PUT") return undefined;
      const parsed = TaskRecordSchema.safeParse(entry.json());
      if (!parsed.success || !belongsTo(parsed.data, asker)) return undefined;
      if (Date.parse(parsed.data.createdAt) + deps.taskTtlMs <= Date.now()) return undefined;
      return parsed.data;
    },
    async updateTask(taskId, change) {
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const entry = await kv.get(`task.${taskId}`);
        if (entry?.operation !== "PUT") return false;
        const parsed = TaskRecordSchema.safeParse(entry.json());
        if (!parsed.success) return false;
        const next = { ...change(parsed.data), lastUpdatedAt: new Date().toISOString() };
        const updated = await kv.update(`task.${taskId}`, JSON.stringify(next), entry.revision).then(
          () => true,
          () => false,
        );
        if (updated) return true;
      }
      return false;
    },
    forwardAnswer(callId, relayId, responses) {
      bus.nc.publish(
        names.gatewayResponses,
        JSON.stringify({ held: { callId, relayId, answer: responses } }),
      );
    },
    onAnswer(listener) {
      answerListeners.push(listener);
    },
    holdQuestion: (question) => hold("held", question),
    async takeQuestion(key, asker, answers) {
      const taken = await take("held", key, HeldQuestionSchema, asker, answers, "call the tool again");
      return taken.ok ? { ok: true, question: taken.value } : taken;
    },
    holdPrompt: (prompt) => hold("prompt", prompt),
    async takePrompt(key, asker, answers) {
      const taken = await take("prompt", key, HeldPromptSchema, asker, answers, "get the prompt again");
      return taken.ok ? { ok: true, prompt: taken.value } : taken;
    },
    stop() {
      for (const subscription of subscriptions) subscription.unsubscribe();
    },
  };
}
