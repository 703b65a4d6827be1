import { JetStreamApiError } from "@nats-io/jetstream";
import {
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
} from "@nats-io/transport-node";
import { describe, expect, it } from "vitest";
import { isTransient, jetStreamFailureOf } from "../../src/core/jetstream-failure.js";

describe("what a failed JetStream request says", () => {
  it("is `unanswered` when nobody answered: no responders or a timeout, however wrapped", () => {
    const noResponders = new NoRespondersError("$KV.b.k");
    expect(
      [
        noResponders,
        new RequestError("request failed", { cause: noResponders }),
        // What a JetStream publish throws when no stream answers (nats.js does not export the class).
        Object.assign(new Error("jetstream is not enabled", { cause: noResponders }), {
          name: "JetStreamNotEnabled",
        }),
        new TimeoutError(),
        new Error("publish failed", { cause: new TimeoutError() }),
      ].map(jetStreamFailureOf),
    ).toEqual(["unanswered", "unanswered", "unanswered", "unanswered", "unanswered"]);
  });

  it("is `unavailable` when JetStream answered it cannot take it now (503)", () => {
    const error = new JetStreamApiError({
      code: 503,
      err_code: 10008,
      description: "JetStream system temporarily unavailable",
    });
    expect(jetStreamFailureOf(error)).toBe("unavailable");
  });

  it("is `recurring` for what fails the same way every time: too large, not permitted, refused for what it is", () => {
    expect(
      [
        new Error("max_payload size exceeded"),
        new PermissionViolationError('Permissions Violation for Publish to "$KV.b.k"', "publish", "$KV.b.k"),
        new JetStreamApiError({ code: 400, err_code: 10077, description: "maximum bytes exceeded" }),
        new Error("something else entirely"),
      ].map(jetStreamFailureOf),
    ).toEqual(["recurring", "recurring", "recurring", "recurring"]);
  });

  it("is worth sending again only when it may pass", () => {
    expect([isTransient("unanswered"), isTransient("unavailable"), isTransient("recurring")]).toEqual([
      true,
      true,
      false,
    ]);
  });
});
