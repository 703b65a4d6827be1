/**
 * `watchedRequest` when an answer is lost on the way back (issue 16, seen in `pnpm bench chaos`):
 * a replica that received a call before its NATS node died answers it after reconnecting to
 * another node, and NATS drops that reply (a connection may answer only the requests it was
 * given). The caller must send the call again, also when another send meanwhile got a reply that
 * says it was not taken: that reply settles nothing. Real NATS; the responder is a plain
 * subscription that drops, refuses and answers as those replicas did.
 */
import { errorEnvelope, okEnvelope } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { watchedRequest } from "../src/call-ledger.js";
import { startBus, uniqueName } from "./support.js";

const ResultSchema = z.object({ ran: z.number() });

describe("a watched request whose first answer NATS dropped", () => {
  it("is sent again after a second send was refused as not taken, and gets the answer of a third", async () => {
    const { bus } = await startBus();
    const subject = `${uniqueName()}.call`;
    let received = 0;
    const responder = bus.nc.subscribe(subject, {
      callback: (_error, msg) => {
        received++;
        // 1: taken, but its reply never arrives (dropped). 2: not taken (the ledger did not answer).
        if (received === 1) return;
        if (received === 2) {
          msg.respond(
            JSON.stringify(
              errorEnvelope(
                "server_unavailable",
                "the executions ledger did not answer; send it again",
                true,
              ),
            ),
          );
          return;
        }
        msg.respond(JSON.stringify(okEnvelope({ ran: received })));
      },
    });
    await bus.nc.flush();
    try {
      const started = Date.now();
      const reply = await watchedRequest(bus, subject, { callId: "call-1" }, ResultSchema, {
        // Long, as a tool timeout is: without another send the caller would wait all of it.
        timeoutMs: 30_000,
        checkEveryMs: 100,
        // Nobody has taken the call: the record stays absent.
        record: { read: async () => ({ state: "absent" }) },
      });
      expect(reply).toEqual({ ran: 3 });
      expect(received).toBe(3);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      responder.unsubscribe();
    }
  });
});
