import { describe, expect, it } from "vitest";
import { CliError, failureMessage, serviceOf } from "../../src/core/failure.js";

describe("failureMessage", () => {
  it("says which NATS could not be reached and how to start toolbus", () => {
    expect(
      failureMessage({
        kind: "nats_unreachable",
        natsUrl: "nats://127.0.0.1:4222",
        reason: "connection refused",
      }),
    ).toBe(
      "cannot reach NATS at nats://127.0.0.1:4222 (connection refused). Start toolbus with `toolbus start` " +
        "(or `pnpm start` in the toolbus checkout), or set NATS_URL to the address of a running nats-server.",
    );
  });

  it("names the service that should serve a subject nobody answers", () => {
    expect(
      failureMessage({ kind: "no_responders", subject: "tenant.approvals.list", prefix: "tenant" }),
    ).toBe(
      "no toolbus approvals service answers on tenant.approvals.list. Start toolbus with `toolbus start` " +
        "(or `pnpm start` in the toolbus checkout), or run the approvals service with TOOLBUS_PREFIX=tenant; " +
        "if toolbus runs under another prefix, set TOOLBUS_PREFIX to it.",
    );
  });

  it("gives the timeout in seconds with the hint and the way to wait longer", () => {
    expect(
      failureMessage({
        kind: "timeout",
        subject: "toolbus.dispatch.call",
        timeoutMs: 1500,
        hint: "the call may still run",
      }),
    ).toBe(
      "no reply on toolbus.dispatch.call within 1.5 s; the call may still run. Raise --timeout to wait longer.",
    );
  });

  it("keeps the service's message and adds its code", () => {
    expect(
      new CliError({ kind: "request_failed", subject: "s", code: "bad_request", message: "already resolved" })
        .message,
    ).toBe("already resolved (bad_request)");
  });
});

describe("serviceOf", () => {
  it.each([
    ["toolbus.catalog.get", "catalog"],
    ["toolbus.catalog.search", "catalog"],
    ["toolbus.dispatch.call", "dispatcher"],
    ["toolbus.approvals.resolve", "approvals"],
    ["toolbus.memory.usage", "memory"],
    ["toolbus.something.else", "toolbus"],
  ])("%s is served by %s", (subject, service) => {
    expect(serviceOf("toolbus", subject)).toBe(service);
  });
});
