import { describe, expect, it } from "vitest";
import { checkHost, type HostCheck } from "../../src/core/host-check.js";

const LOCAL = ["localhost", "127.0.0.1", "[::1]"];
const denied = (message: string): HostCheck => ({ ok: false, message });

describe("host check", () => {
  it.each<[string, { host?: string; origin?: string }, readonly string[], HostCheck]>([
    ["allows a listed host on any port", { host: "127.0.0.1:8080" }, LOCAL, { ok: true }],
    ["allows IPv6 loopback in brackets", { host: "[::1]:8080" }, LOCAL, { ok: true }],
    ["ignores case", { host: "LocalHost:1" }, LOCAL, { ok: true }],
    ["allows a listed Origin", { host: "localhost", origin: "http://localhost:5173" }, LOCAL, { ok: true }],
    ["allows the opaque Origin null to read", { host: "localhost", origin: "null" }, LOCAL, { ok: true }],
    ["lets * turn the check off", { host: "evil.example.com" }, ["*"], { ok: true }],
    [
      "refuses a host that is not listed",
      { host: "evil.example.com" },
      LOCAL,
      denied(
        'Forbidden: Host header "evil.example.com" is not an allowed host (localhost, 127.0.0.1, [::1]); add it to [gateway] allowed_hosts if this gateway should answer to it',
      ),
    ],
    [
      "refuses a missing Host header",
      {},
      LOCAL,
      denied(
        'Forbidden: Host header "" is not an allowed host (localhost, 127.0.0.1, [::1]); add it to [gateway] allowed_hosts if this gateway should answer to it',
      ),
    ],
    [
      "refuses a host that only starts like an allowed one",
      { host: "localhost.evil.com" },
      LOCAL,
      denied(
        'Forbidden: Host header "localhost.evil.com" is not an allowed host (localhost, 127.0.0.1, [::1]); add it to [gateway] allowed_hosts if this gateway should answer to it',
      ),
    ],
    [
      "refuses an Origin from another host",
      { host: "localhost", origin: "https://evil.example.com" },
      LOCAL,
      denied(
        'Forbidden: Origin "https://evil.example.com" is not an allowed host (localhost, 127.0.0.1, [::1]); add it to [gateway] allowed_hosts if browsers on it may call this gateway',
      ),
    ],
    [
      "refuses an Origin that hides another host behind user info",
      { host: "localhost", origin: "http://localhost@evil.example.com" },
      LOCAL,
      denied(
        'Forbidden: Origin "http://localhost@evil.example.com" is not an allowed host (localhost, 127.0.0.1, [::1]); add it to [gateway] allowed_hosts if browsers on it may call this gateway',
      ),
    ],
  ])("%s", (_rule, headers, allowed, expected) => {
    expect(checkHost(headers, allowed)).toEqual(expected);
  });

  it.each(["POST", "DELETE", "PUT", "PATCH"])(
    "refuses Origin null on %s, even with the host check off",
    (method) => {
      const refused = denied(
        `Forbidden: Origin null (a sandboxed frame, a file: page or a cross-site redirect) may not ${method}; send the request from a page served by an allowed host`,
      );
      expect([
        checkHost({ host: "localhost", origin: "null" }, LOCAL, method),
        checkHost({ host: "localhost", origin: "null" }, ["*"], method),
        checkHost({ host: "localhost", origin: "http://localhost:8080" }, LOCAL, method),
      ]).toEqual([refused, refused, { ok: true }]);
    },
  );
});
