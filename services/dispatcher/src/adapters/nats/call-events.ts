/**
 * Lifecycle events on the events stream. Published without waiting for the ack (the call
 * never waits; the bus tracks and retries the ack), with a msgID per call and phase so a
 * retried publish is stored once.
 *
 * A begin goes out at once and shares its socket write with the call's next bus message (the
 * approval request or the connector call). An end is queued and published on the next turn
 * of the event loop, after the reply has left, so the caller never waits for it, and under
 * load the ends of many calls share one write. Order holds: a call's begin is always
 * published before its end, and ends in the order they were queued. `flush()` publishes what
 * is still queued (the service's stop calls it, before the bus flushes its acks).
 */
import { type Context, context } from "@opentelemetry/api";
import type { Bus } from "@toolbus/bus";
import type { CallBeginEvent, CallEndEvent, Subjects } from "@toolbus/protocol";
import { type CallPhase, EVENT_HEADER_ROOM_BYTES } from "../../core/index.js";
import type { EventsPort } from "../../ports.js";
import type { CallHistoryIndex } from "./call-history.js";

/** NATS's default max_payload, for the moment before the server's INFO is known. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

export interface CallEvents extends EventsPort {
  /** Publishes every queued end event now. */
  flush(): void;
}

export function createCallEvents(bus: Bus, subjects: Subjects, history?: CallHistoryIndex): CallEvents {
  // A thread's events are indexed by thread once stored, for dispatch.history.
  const indexed = (event: CallBeginEvent | CallEndEvent, phase: CallPhase) => {
    const { threadId } = event;
    return history && threadId !== undefined
      ? { onStored: (sequence: number) => history.record(threadId, event.callId, phase, sequence) }
      : {};
  };
  // Each end keeps the trace context of its call, so its headers name the right trace.
  let queued: Array<{ event: CallEndEvent; trace: Context }> = [];
  let scheduled: NodeJS.Immediate | undefined;
  const flush = () => {
    if (scheduled) clearImmediate(scheduled);
    scheduled = undefined;
    const ends = queued;
    queued = [];
    for (const { event, trace } of ends) {
      context.with(trace, () =>
        bus.publishEvent(subjects.callEnd, event, { msgID: `${event.callId}:end`, ...indexed(event, "end") }),
      );
    }
  };
  return {
    get maxEventBytes() {
      return (bus.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - EVENT_HEADER_ROOM_BYTES;
    },
    begin(event) {
      bus.publishEvent(subjects.callBegin, event, {
        msgID: `${event.callId}:begin`,
        ...indexed(event, "begin"),
      });
    },
    end(event) {
      queued.push({ event, trace: context.active() });
      scheduled ??= setImmediate(flush);
    },
    flush,
  };
}
