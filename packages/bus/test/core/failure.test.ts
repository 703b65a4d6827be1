import { WireError } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { failureOf, LOG_LEVEL_BY_CODE } from "../../src/core/failure.js";

const where = { service: "catalog", endpoint: "get", errorId: "E1" };

describe("failureOf", () => {
  it("answers a WireError with its own code, message and retryable flag", () => {
    const err = new WireError("stale_revision", "the catalog changed", { retryable: true });
    expect(failureOf(err, where)).toEqual({
      envelope: {
        ok: false,
        error: { code: "stale_revision", message: "the catalog changed", retryable: true },
      },
      level: "info",
      unexpected: false,
    });
  });

  it("answers anything else as internal without leaking its message, pointing at the logs", () => {
    const failure = failureOf(new Error("password=hunter2 in /etc/secret"), where);
    expect(failure).toEqual({
      envelope: {
        ok: false,
        error: {
          code: "internal",
          message:
            "the request failed because of an internal error in catalog (get); its logs have the cause under errorId E1",
          retryable: true,
        },
      },
      level: "error",
      unexpected: true,
    });
  });

  it("answers a WireError whose code is outside the closed set as internal", () => {
    const err = new WireError("no_such_code" as never, "made up");
    expect(failureOf(err, where)).toMatchObject({
      envelope: { ok: false, error: { code: "internal" } },
      level: "error",
      unexpected: true,
    });
  });

  it("treats a thrown non-Error value as internal too", () => {
    expect(failureOf("boom", where).envelope).toMatchObject({ ok: false, error: { code: "internal" } });
  });

  it.each([
    { code: "bad_request", level: "info" },
    { code: "unauthorized", level: "info" },
    { code: "server_unavailable", level: "warn" },
    { code: "timeout", level: "warn" },
    { code: "internal", level: "error" },
  ] as const)("puts caller faults at info and our own at error: $code → $level", ({ code, level }) => {
    expect(LOG_LEVEL_BY_CODE[code]).toBe(level);
  });
});
