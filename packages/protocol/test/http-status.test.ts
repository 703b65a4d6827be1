// The HTTP status of each wire error code: one table every HTTP surface answers with, checked
// against the rules it follows and against the retryability table beside it.
import { describe, expect, it } from "vitest";
import { ERROR_CODES, RETRYABLE_BY_DEFAULT } from "../src/errors.js";
import { HTTP_STATUS_BY_CODE, HttpRefusal } from "../src/http-status.js";

describe("HTTP_STATUS_BY_CODE", () => {
  it("gives every code a status, and nothing else one", () => {
    expect(Object.keys(HTTP_STATUS_BY_CODE).sort()).toEqual([...ERROR_CODES].sort());
  });

  it("answers the caller's faults with 4xx and the ones worth retrying with 5xx", () => {
    const wrongClass = ERROR_CODES.filter(
      (code) => HTTP_STATUS_BY_CODE[code] >= 500 !== RETRYABLE_BY_DEFAULT[code],
    );
    expect(wrongClass).toEqual([]);
  });

  it("keeps 500 for internal alone: nothing else is toolbus's own fault", () => {
    expect(ERROR_CODES.filter((code) => HTTP_STATUS_BY_CODE[code] === 500)).toEqual(["internal"]);
  });

  it("answers the codes the gateway and the approvals routes once disagreed on as HTTP means them", () => {
    // The gateway answered all of these 500; the approvals routes 408 for a timed-out approval.
    expect({
      stale_revision: HTTP_STATUS_BY_CODE.stale_revision,
      approval_cancelled: HTTP_STATUS_BY_CODE.approval_cancelled,
      tool_hidden: HTTP_STATUS_BY_CODE.tool_hidden,
      approval_denied: HTTP_STATUS_BY_CODE.approval_denied,
      approval_timed_out: HTTP_STATUS_BY_CODE.approval_timed_out,
      server_not_ready: HTTP_STATUS_BY_CODE.server_not_ready,
      transport_error: HTTP_STATUS_BY_CODE.transport_error,
    }).toEqual({
      stale_revision: 409,
      approval_cancelled: 409,
      tool_hidden: 403,
      approval_denied: 403,
      approval_timed_out: 403,
      server_not_ready: 503,
      transport_error: 502,
    });
  });
});

describe("HttpRefusal", () => {
  it("lists only refusals whose status differs from their code's own", () => {
    const ownStatus = (code: keyof typeof HTTP_STATUS_BY_CODE): number => HTTP_STATUS_BY_CODE[code];
    const redundant = Object.entries(HttpRefusal).filter(
      ([, refusal]) => refusal.status === ownStatus(refusal.code),
    );
    expect(redundant).toEqual([]);
  });
});
