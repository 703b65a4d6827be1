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
      "cannot reach NATS at nats://127.0.0.1:4222 (connection refused). Start toolbus with `pnpm start` " +
        "in the toolbus checkout (or `toolbus start`), or set NATS_URL to the address of a running nats-server.",
    );
  });

  it("names the NATS it tried and the service that should serve a subject nobody answers, and what to do", () => {
    expect(
      failureMessage({
        kind: "no_responders",
        subject: "tenant.approvals.list",
        prefix: "tenant",
        natsUrl: "nats://127.0.0.1:4222",
      }),
    ).toBe(
      "nothing answers on tenant.approvals.list at nats://127.0.0.1:4222: no toolbus approvals service runs " +
        "there under the prefix tenant. Start toolbus with `pnpm start` in the toolbus checkout (or " +
        "`toolbus start`), or set NATS_URL to the NATS your toolbus uses (and TOOLBUS_PREFIX, if it runs " +
        "under another prefix).",
    );
  });

  it("says a refused subject may be another prefix's, naming the NATS and the prefix", () => {
    expect(
      failureMessage({
        kind: "not_permitted",
        message:
          "the NATS server does not let this identity subscribe to _INBOX_nothere_cli.x.*; its role's permissions (toolbus nats-config) do not include it",
        prefix: "nothere",
        natsUrl: "nats://127.0.0.1:40045",
      }),
    ).toBe(
      "the NATS server does not let this identity subscribe to _INBOX_nothere_cli.x.*; its role's permissions " +
        "(toolbus nats-config) do not include it (at nats://127.0.0.1:40045, under the prefix nothere). If " +
        "toolbus runs there under another prefix, set TOOLBUS_PREFIX to it; otherwise use the cli.nk that " +
        "`toolbus nats-config` wrote for that NATS (NATS_NKEY_FILE).",
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
