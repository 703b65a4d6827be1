import { describe, expect, it } from "vitest";
import {
  checkCookieRequest,
  clearCookie,
  cookieNames,
  cookieValue,
  isStateChanging,
  safeReturnTo,
  setCookie,
} from "../../src/core/signin.js";

describe("the sign-in cookies", () => {
  it("are __Host- and Secure over https, plain on loopback http", () => {
    expect([cookieNames(true), cookieNames(false)]).toEqual([
      { session: "__Host-toolbus-session", attempt: "__Host-toolbus-signin", secure: true },
      { session: "toolbus-session", attempt: "toolbus-signin", secure: false },
    ]);
    expect(
      setCookie("__Host-toolbus-session", "v", { secure: true, sameSite: "Strict", maxAgeSec: 60.7 }),
    ).toBe("__Host-toolbus-session=v; Path=/; Max-Age=60; HttpOnly; SameSite=Strict; Secure");
    expect(clearCookie("toolbus-signin", { secure: false, sameSite: "Lax" })).toBe(
      "toolbus-signin=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax",
    );
  });

  it("are read by exact name from a Cookie header, the first one winning", () => {
    const header = "xtoolbus-session=no; toolbus-session=first; toolbus-session=second; other=1";
    expect([
      cookieValue(header, "toolbus-session"),
      cookieValue(header, "missing"),
      cookieValue("toolbus-session=", "toolbus-session"),
      cookieValue(undefined, "toolbus-session"),
    ]).toEqual(["first", undefined, undefined, undefined]);
  });
});

describe("where a sign-in returns to", () => {
  it.each([
    ["/approvals", "/approvals"],
    ["/?q=1", "/?q=1"],
    ["//evil.example/x", "/"],
    ["/\\evil.example", "/"],
    ["https://evil.example", "/"],
    ["/a\nSet-Cookie: x=1", "/"],
    ["approvals", "/"],
    [undefined, "/"],
    [["/approvals"], "/"],
    [`/${"a".repeat(600)}`, "/"],
  ])("%j → %j", (given, expected) => {
    expect(safeReturnTo(given)).toBe(expected);
  });
});

describe("a request signed in by cookie", () => {
  const expected = { origin: "https://toolbus.example.com", csrfToken: "t0ken-of-the-session" };
  const check = (method: string, origin: string | undefined, csrfToken: string | undefined) =>
    checkCookieRequest({ method, origin, csrfToken }, expected);

  it("reads freely: GET, HEAD and OPTIONS need no Origin and no token", () => {
    expect(["GET", "HEAD", "OPTIONS"].map((method) => check(method, undefined, undefined))).toEqual([
      { ok: true },
      { ok: true },
      { ok: true },
    ]);
    expect(["POST", "PUT", "PATCH", "DELETE", "post"].every(isStateChanging)).toBe(true);
  });

  it("changes something only from the gateway's own origin with the session's CSRF token", () => {
    expect(check("POST", expected.origin, expected.csrfToken)).toEqual({ ok: true });
    expect(check("DELETE", expected.origin, expected.csrfToken)).toEqual({ ok: true });
    const refusals = [
      check("POST", undefined, expected.csrfToken),
      check("POST", "https://evil.example", expected.csrfToken),
      check("POST", "https://toolbus.example.com:8443", expected.csrfToken),
      check("POST", "http://toolbus.example.com", expected.csrfToken),
      check("DELETE", expected.origin, undefined),
      check("POST", expected.origin, "t0ken-of-the-sessioN"),
      check("POST", expected.origin, "t0ken"),
    ];
    expect(refusals.map((refusal) => refusal.ok)).toEqual(refusals.map(() => false));
    expect(refusals.map((refusal) => (refusal.ok ? "" : refusal.message))).toEqual([
      "Forbidden: a POST signed in by cookie must carry an Origin header (browsers send it); send it from a page of https://toolbus.example.com, or use Authorization: Bearer <token>",
      'Forbidden: a POST signed in by cookie must come from a page of https://toolbus.example.com, not "https://evil.example"',
      'Forbidden: a POST signed in by cookie must come from a page of https://toolbus.example.com, not "https://toolbus.example.com:8443"',
      'Forbidden: a POST signed in by cookie must come from a page of https://toolbus.example.com, not "http://toolbus.example.com"',
      "Forbidden: a DELETE signed in by cookie must carry the session's CSRF token in the x-csrf-token header (the page reads it from /auth/session); none was sent",
      "Forbidden: a POST signed in by cookie must carry the session's CSRF token in the x-csrf-token header (the page reads it from /auth/session); the one sent is not this session's",
      "Forbidden: a POST signed in by cookie must carry the session's CSRF token in the x-csrf-token header (the page reads it from /auth/session); the one sent is not this session's",
    ]);
  });
});
