/**
 * Lifecycle events on the events stream. Published without waiting for the ack (the call
 * never waits), with a msgID per call and phase so a retried publish is stored once.
 */
import type { Bus } from "@toolbus/bus";
import type { Subjects } from "@toolbus/protocol";
import type { EventsPort } from "../../handlers/dispatch-call.js";

export function createCallEvents(bus: Bus, subjects: Subjects): EventsPort {
  return {
    begin(event) {
      bus.publishEvent(subjects.callBegin, event, { msgID: `${event.callId}:begin` });
    },
    end(event) {
      bus.publishEvent(subjects.callEnd, event, { msgID: `${event.callId}:end` });
    },
  };
}
