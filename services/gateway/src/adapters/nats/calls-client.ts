/**
 * The calls this gateway replica runs for its clients (MCP and REST), by callId with who started
 * them, and their cancellation: `<prefix>.calls.<callId>.cancel`, which the dispatcher running the
 * call acts on. Holds only calls in flight.
 */
import { type Bus, publishCancellation } from "@toolbus/bus";
import type { Subjects } from "@toolbus/protocol";
import type { CallsPort } from "../../ports.js";

export function callsClient(bus: Pick<Bus, "publish">, subjects: Subjects): CallsPort {
  const running = new Map<string, Array<{ principal: string }>>();
  return {
    started(callId, principal) {
      const entry = { principal };
      const entries = running.get(callId) ?? [];
      entries.push(entry);
      running.set(callId, entries);
      return () => {
        const left = (running.get(callId) ?? []).filter((other) => other !== entry);
        if (left.length === 0) running.delete(callId);
        else running.set(callId, left);
      };
    },
    principalsOf(callId) {
      return (running.get(callId) ?? []).map((entry) => entry.principal);
    },
    cancel(callId, reason) {
      publishCancellation(bus, subjects.callCancel(callId), { callId, reason });
    },
  };
}
