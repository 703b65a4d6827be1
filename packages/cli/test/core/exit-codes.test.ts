import { describe, expect, it } from "vitest";
import { ExitCode, exitCodeForCall } from "../../src/core/exit-codes.js";
import { exitCodeOf, type Failure } from "../../src/core/failure.js";

describe("exitCodeForCall", () => {
  it.each([
    ["completed", true, ExitCode.ok],
    ["completed", false, ExitCode.failed],
    ["failed", false, ExitCode.failed],
    ["skipped", false, ExitCode.failed],
    ["invalid_arguments", false, ExitCode.invalidArguments],
  ] as const)("a %s call whose output success is %s exits %i", (status, success, code) => {
    expect(exitCodeForCall({ status, output: { success, body: "" } })).toBe(code);
  });
});

describe("exitCodeOf", () => {
  const cases: Array<[Failure, ExitCode]> = [
    [{ kind: "usage", message: "x" }, 2],
    [{ kind: "config", message: "x" }, 2],
    [{ kind: "nats_unreachable", natsUrl: "nats://h:1", reason: "refused" }, 3],
    [
      { kind: "no_responders", subject: "toolbus.catalog.get", prefix: "toolbus", natsUrl: "nats://h:4222" },
      3,
    ],
    [{ kind: "not_permitted", message: "x", prefix: "other", natsUrl: "nats://h:4222" }, 3],
    [{ kind: "timeout", subject: "toolbus.catalog.get", timeoutMs: 1000 }, 1],
    [{ kind: "request_failed", subject: "s", code: "bad_request", message: "m" }, 1],
    [{ kind: "start_unavailable", message: "m" }, 1],
    [{ kind: "interrupted", message: "m" }, 130],
  ];
  it.each(cases)("maps %j to exit code %i", (failure, code) => {
    expect(exitCodeOf(failure)).toBe(code);
  });
});
