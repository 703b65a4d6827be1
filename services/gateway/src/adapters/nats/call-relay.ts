/**
 * Listens to one call's relays, `<prefix>.calls.<callId>.{progress,logging,elicitation,sampling}`:
 * the catalog's connector publishes what the server sends during the call, and asks the caller
 * to answer elicitations and sampling requests (this answers with the reply envelope the bus
 * contract uses).
 */
import type { Msg, NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@toolbus/bus";
import {
  CallElicitationRequestSchema,
  CallLoggingSchema,
  CallProgressSchema,
  CallSamplingRequestSchema,
  errorEnvelope,
  okEnvelope,
  type Subjects,
  WireError,
} from "@toolbus/protocol";
import type { CallRelayPort } from "../../ports.js";

export function callRelayListener(nc: NatsConnection, subjects: Subjects, logger: Logger): CallRelayPort {
  return {
    open(callId, sinks) {
      const subscription = nc.subscribe(subjects.callRelayAll(callId), {
        callback: (error, msg) => {
          if (error) return;
          const kind = msg.subject.slice(msg.subject.lastIndexOf(".") + 1);
          try {
            if (kind === "progress") {
              const event = CallProgressSchema.safeParse(msg.json());
              if (event.success) sinks.progress(event.data);
            } else if (kind === "logging") {
              const event = CallLoggingSchema.safeParse(msg.json());
              if (event.success) sinks.logging(event.data);
            } else if (kind === "elicitation") {
              void answerElicitation(msg, sinks.elicitation, logger);
            } else if (kind === "sampling") {
              void answerSampling(msg, sinks.sampling, logger);
            }
          } catch (err) {
            logger.warn({ err, subject: msg.subject }, "ignored a malformed call relay message");
          }
        },
      });
      return () => subscription.unsubscribe();
    },
  };
}

async function answerElicitation(
  msg: Msg,
  answer: Parameters<CallRelayPort["open"]>[1]["elicitation"],
  logger: Logger,
): Promise<void> {
  const request = CallElicitationRequestSchema.safeParse(msg.json());
  if (!request.success) {
    msg.respond(JSON.stringify(errorEnvelope("bad_request", "the elicitation relay request is malformed")));
    return;
  }
  try {
    msg.respond(JSON.stringify(okEnvelope(await answer(request.data))));
  } catch (err) {
    logger.warn({ err }, "could not answer a relayed elicitation; the server gets a decline");
    msg.respond(JSON.stringify(okEnvelope({ action: "decline" })));
  }
}

/** Sampling has no "decline": a failure goes back as an error envelope, which the server gets as its error. */
async function answerSampling(
  msg: Msg,
  answer: Parameters<CallRelayPort["open"]>[1]["sampling"],
  logger: Logger,
): Promise<void> {
  const request = CallSamplingRequestSchema.safeParse(msg.json());
  if (!request.success) {
    msg.respond(JSON.stringify(errorEnvelope("bad_request", "the sampling relay request is malformed")));
    return;
  }
  try {
    msg.respond(JSON.stringify(okEnvelope(await answer(request.data))));
  } catch (err) {
    if (err instanceof WireError) {
      msg.respond(JSON.stringify(errorEnvelope(err.code, err.message)));
      return;
    }
    logger.error({ err }, "could not relay a sampling request to the client");
    msg.respond(
      JSON.stringify(
        errorEnvelope("internal", `the gateway could not relay the sampling request: ${String(err)}`),
      ),
    );
  }
}
