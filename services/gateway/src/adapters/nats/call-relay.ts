/**
 * Listens to the relays of the calls this replica runs, `<prefix>.calls.<callId>.<server>.{progress,
 * logging,elicitation,sampling,input}`: the connector of the call's server publishes what the
 * server sends during the call (no other connector may use these subjects), and asks the caller
 * to answer elicitations, sampling requests and a 2026-07-28 server's rounds of questions (this
 * answers with the reply envelope the bus contract uses).
 *
 * Progress and log messages arrive on one subscription per kind for the whole process, handed to
 * the call by subject. Elicitations and sampling requests keep one subscription per call
 * (elicitations only for a client that can answer one): with none, the connector's request finds
 * no responder and the server gets its decline or error at once, which a process-wide
 * subscription (answering only its own calls) would turn into a wait.
 * A wildcard subscription per call would cost the NATS server a sweep of its subject cache on
 * every subscribe and unsubscribe; these are plain subjects.
 *
 * Elicitations, sampling requests and rounds are held (`relayId`, `holdMs`; docs/contract.md "Held
 * calls"): each send is answered within its hold, with the answer or a retryable `timeout`, and
 * a send again under the same relayId waits on for the same answer instead of asking again.
 */
import type { Msg, NatsConnection, Subscription } from "@nats-io/transport-node";
import { answerWithin, type Logger, NoAnswerYet } from "@toolbus/bus";
import {
  CallElicitationRequestSchema,
  CallInputRequestSchema,
  CallLoggingSchema,
  CallProgressSchema,
  CallSamplingRequestSchema,
  errorEnvelope,
  okEnvelope,
  type Subjects,
  WireError,
} from "@toolbus/protocol";
import type { z } from "zod";
import type { CallRelayPort, CallRelaySinks } from "../../ports.js";

export interface CallRelayListener extends CallRelayPort {
  /** Ends the process-wide subscriptions. */
  stop(): void;
}

export function callRelayListener(nc: NatsConnection, subjects: Subjects, logger: Logger): CallRelayListener {
  /** The sinks of each open call, by the subject of its progress and of its log messages. */
  const progressSinks = new Map<string, CallRelaySinks>();
  const loggingSinks = new Map<string, CallRelaySinks>();
  const events = (
    kind: "progress" | "logging",
    sinksBySubject: ReadonlyMap<string, CallRelaySinks>,
    deliver: (msg: Msg, sinks: CallRelaySinks) => void,
  ) =>
    nc.subscribe(subjects.callRelayEvery(kind), {
      callback: (error, msg) => {
        if (error) return;
        const sinks = sinksBySubject.get(msg.subject);
        if (!sinks) return;
        try {
          deliver(msg, sinks);
        } catch (err) {
          logger.warn({ err, subject: msg.subject }, "ignored a malformed call relay message");
        }
      },
    });
  const processWide: Subscription[] = [
    events("progress", progressSinks, (msg, sinks) => {
      const event = CallProgressSchema.safeParse(msg.json());
      if (event.success) sinks.progress(event.data);
    }),
    events("logging", loggingSinks, (msg, sinks) => {
      const event = CallLoggingSchema.safeParse(msg.json());
      if (event.success) sinks.logging(event.data);
    }),
  ];
  return {
    open(callId, server, sinks) {
      const progressSubject = subjects.callRelay(callId, server, "progress");
      const loggingSubject = subjects.callRelay(callId, server, "logging");
      progressSinks.set(progressSubject, sinks);
      loggingSinks.set(loggingSubject, sinks);
      const { elicitation, input } = sinks;
      const questions = openQuestions(callId);
      const requests = [
        // Two subscription changes per call the NATS server applies: only when the client can answer.
        ...(elicitation
          ? [
              nc.subscribe(subjects.callRelay(callId, server, "elicitation"), {
                callback: (error, msg) => {
                  if (!error) void answerElicitation(msg, questions, elicitation, logger);
                },
              }),
            ]
          : []),
        nc.subscribe(subjects.callRelay(callId, server, "sampling"), {
          callback: (error, msg) => {
            if (!error) void answerOrFail(msg, CallSamplingRequestSchema, questions, sinks.sampling, logger);
          },
        }),
        ...(input
          ? [
              nc.subscribe(subjects.callRelay(callId, server, "input"), {
                callback: (error, msg) => {
                  if (!error) void answerOrFail(msg, CallInputRequestSchema, questions, input, logger);
                },
              }),
            ]
          : []),
      ];
      return () => {
        if (progressSinks.get(progressSubject) === sinks) progressSinks.delete(progressSubject);
        if (loggingSinks.get(loggingSubject) === sinks) loggingSinks.delete(loggingSubject);
        for (const subscription of requests) subscription.unsubscribe();
        questions.clear();
      };
    },
    stop() {
      for (const subscription of processWide) subscription.unsubscribe();
      progressSinks.clear();
      loggingSinks.clear();
    },
  };
}

/** How many of a call's questions may wait for their answers at once; a server asking more is refused. */
export const MAX_OPEN_QUESTIONS_PER_CALL = 16;

interface OpenQuestions {
  /** The answer to the question `relayId` names, asked once however often it is sent; within `holdMs` when given. */
  answer<T>(relayId: string | undefined, holdMs: number | undefined, ask: () => Promise<T>): Promise<T>;
  clear(): void;
}

/** One call's questions still waiting for their answer, by relayId. */
function openQuestions(callId: string): OpenQuestions {
  const open = new Map<string, { answer: Promise<unknown>; settled: boolean }>();
  return {
    answer<T>(relayId: string | undefined, holdMs: number | undefined, ask: () => Promise<T>): Promise<T> {
      if (relayId === undefined) return ask();
      let question = open.get(relayId);
      if (question === undefined) {
        if (open.size >= MAX_OPEN_QUESTIONS_PER_CALL) {
          return Promise.reject(
            new WireError(
              "bad_request",
              `the server of tool call ${callId} already waits for ${MAX_OPEN_QUESTIONS_PER_CALL} answers; it may not ask more at once`,
            ),
          );
        }
        const entry = { answer: ask() as Promise<unknown>, settled: false };
        // Settled while no send waits for it: kept for the next send, never an unhandled rejection.
        entry.answer.then(
          () => (entry.settled = true),
          () => (entry.settled = true),
        );
        open.set(relayId, entry);
        question = entry;
      }
      const asked = question;
      return answerWithin(
        asked.answer as Promise<T>,
        holdMs,
        `the caller of tool call ${callId} has not answered yet; send the same request again for the answer`,
      ).then(
        (answered) => {
          if (open.get(relayId) === asked) open.delete(relayId);
          return answered;
        },
        (error: unknown) => {
          // The hold ran out: the question stays open for the next send.
          if (!asked.settled) throw error;
          if (open.get(relayId) === asked) open.delete(relayId);
          // The caller's own timeout is the answer: final, not "send again".
          if (error instanceof WireError && error.code === "timeout")
            throw new WireError("timeout", error.message, { retryable: false, cause: error });
          throw error;
        },
      );
    },
    clear: () => open.clear(),
  };
}

async function answerElicitation(
  msg: Msg,
  questions: OpenQuestions,
  answer: NonNullable<CallRelaySinks["elicitation"]>,
  logger: Logger,
): Promise<void> {
  const request = CallElicitationRequestSchema.safeParse(jsonOf(msg));
  if (!request.success) {
    msg.respond(JSON.stringify(errorEnvelope("bad_request", "the elicitation relay request is malformed")));
    return;
  }
  const { relayId, holdMs } = request.data;
  try {
    msg.respond(
      JSON.stringify(okEnvelope(await questions.answer(relayId, holdMs, () => answer(request.data)))),
    );
  } catch (err) {
    if (isNoAnswerYet(err)) {
      msg.respond(JSON.stringify(errorEnvelope(err.code, err.message, true)));
      return;
    }
    logger.warn({ err }, "could not answer a relayed elicitation; the server gets a decline");
    msg.respond(JSON.stringify(okEnvelope({ action: "decline" })));
  }
}

/**
 * Sampling (and a round, which may hold sampling requests) has no "decline": a failure goes back
 * as an error envelope, which the server gets as its error.
 */
async function answerOrFail<R extends { relayId?: string | undefined; holdMs?: number | undefined }>(
  msg: Msg,
  schema: z.ZodType<R>,
  questions: OpenQuestions,
  answer: (request: R) => Promise<unknown>,
  logger: Logger,
): Promise<void> {
  const request = schema.safeParse(jsonOf(msg));
  if (!request.success) {
    msg.respond(
      JSON.stringify(errorEnvelope("bad_request", `the relay request on ${msg.subject} is malformed`)),
    );
    return;
  }
  const { relayId, holdMs } = request.data;
  try {
    msg.respond(
      JSON.stringify(okEnvelope(await questions.answer(relayId, holdMs, () => answer(request.data)))),
    );
  } catch (err) {
    if (err instanceof WireError) {
      msg.respond(JSON.stringify(errorEnvelope(err.code, err.message, err.retryable)));
      return;
    }
    logger.error({ err, subject: msg.subject }, "could not relay a server's request to the client");
    msg.respond(
      JSON.stringify(
        errorEnvelope("internal", `the gateway could not relay the server's request: ${String(err)}`),
      ),
    );
  }
}

/** The hold ran out before the caller answered: the connector sends the question again. */
function isNoAnswerYet(error: unknown): error is NoAnswerYet {
  return error instanceof NoAnswerYet;
}

/** The message's JSON body; undefined when it is not JSON (the schema then rejects it). */
function jsonOf(msg: Msg): unknown {
  try {
    return msg.json();
  } catch {
    return undefined;
  }
}
