/**
 * Lifecycle events on the events stream. Published without waiting for the ack (the call
 * never waits; the bus tracks and retries the ack), with a msgID per call and phase so a
 * retried publish is stored once.
 *
 * Both share a socket write with the call's next bus message: a begin goes out at once, in
 * the write of the approval request or the connector call that follows it; an end is queued
 * for a microtask, which runs before the reply is sent, so the reply and the end leave
 * together. Order holds: a call's begin is always published before its end, and ends in the
 * order they were queued. `flush()` publishes what is still queued (shutdown calls it).
 */
import { type Context, context } from "@opentelemetry/api";
import type { Bus } from "@toolbus/bus";
import type { CallEndEvent, Subjects } from "@toolbus/protocol";
import { EVENT_HEADER_ROOM_BYTES } from "../../core/index.js";
import type { EventsPort } from "../../handlers/dispatch-call.js";

/** NATS's default max_payload, for the moment before the server's INFO is known. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

export interface CallEvents extends EventsPort {
  /** Publishes every queued end event now. */
  flush(): void;
}

export function createCallEvents(bus: Bus, subjects: Subjects): CallEvents {
  // Each end keeps the trace context of its call, so its headers name the right trace.
  let queued: Array<{ event: CallEndEvent; trace: Context }> = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const ends = queued;
    queued = [];
    for (const { event, trace } of ends) {
      context.with(trace, () => bus.publishEvent(subjects.callEnd, event, { msgID: `${event.callId}:end` }));
    }
  };
  return {
    get maxEventBytes() {
      return (bus.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - EVENT_HEADER_ROOM_BYTES;
    },
    begin(event) {
      bus.publishEvent(subjects.callBegin, event, { msgID: `${event.callId}:begin` });
    },
    end(event) {
      queued.push({ event, trace: context.active() });
      if (!scheduled) {
        scheduled = true;
        queueMicrotask(flush);
      }
    },
    flush,
  };
}
