/**
 * Lifecycle events on the events stream. Published without waiting for the ack (the call
 * never waits), with a msgID per call and phase so a retried publish is stored once.
 */
import type { Bus } from "@toolbus/bus";
import type { Subjects } from "@toolbus/protocol";
import { EVENT_HEADER_ROOM_BYTES } from "../../core/index.js";
import type { EventsPort } from "../../handlers/dispatch-call.js";

/** NATS's default max_payload, for the moment before the server's INFO is known. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

export function createCallEvents(bus: Bus, subjects: Subjects): EventsPort {
  return {
    get maxEventBytes() {
      return (bus.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD) - EVENT_HEADER_ROOM_BYTES;
    },
    begin(event) {
      bus.publishEvent(subjects.callBegin, event, { msgID: `${event.callId}:begin` });
    },
    end(event) {
      bus.publishEvent(subjects.callEnd, event, { msgID: `${event.callId}:end` });
    },
  };
}
