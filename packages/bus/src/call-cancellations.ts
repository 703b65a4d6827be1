/**
 * A call's cancellation on the bus: `followCancellations` subscribes to one cancellation subject
 * (wildcards welcome: one subscription for every call) and hands each message to the process's
 * `CallCancellations`; `publishCancellation` sends one. Malformed messages are dropped and logged.
 */
import {
  type CallCancel,
  CallCancelSchema,
  MAX_CANCEL_REASON_BYTES,
  utf8ByteLength,
} from "@toolbus/protocol";
import type { Bus } from "./bus.js";
import type { CallCancellations } from "./core/call-cancellations.js";
import type { Logger } from "./logger.js";

/** Subscribes to `subject`; returns the function that stops following it. */
export function followCancellations(
  bus: Pick<Bus, "nc">,
  subject: string,
  cancellations: CallCancellations,
  logger: Logger,
): () => void {
  const subscription = bus.nc.subscribe(subject, {
    callback: (error, msg) => {
      if (error) return;
      let body: unknown;
      try {
        body = msg.json();
      } catch {
        body = undefined;
      }
      const parsed = CallCancelSchema.safeParse(body);
      if (!parsed.success) {
        logger.warn({ subject: msg.subject }, "ignored a malformed call cancellation");
        return;
      }
      const { callId, reason } = parsed.data;
      // Every replica hears every cancellation: only the one running the call has news.
      if (cancellations.cancel(callId, reason)) logger.info({ callId, reason }, "cancelling a running call");
      else logger.debug({ callId, reason }, "remembered the cancellation of a call not running here");
    },
  });
  return () => subscription.unsubscribe();
}

/** Publishes a cancellation, its reason cut to what the message may carry. */
export function publishCancellation(bus: Pick<Bus, "publish">, subject: string, cancel: CallCancel): void {
  bus.publish(subject, { callId: cancel.callId, reason: fitReason(cancel.reason) });
}

function fitReason(reason: string): string {
  if (utf8ByteLength(reason) <= MAX_CANCEL_REASON_BYTES) return reason;
  // At most 4 bytes a character, and 3 for the ellipsis: always under the cap.
  return `${reason.slice(0, Math.floor((MAX_CANCEL_REASON_BYTES - 3) / 4))}…`;
}
