import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ACCESS_BY_ROLE,
  ACCESS_LEVELS,
  type Access,
  forbiddenMessage,
  needsToken,
  permits,
} from "../../src/core/access.js";
import { bearerToken } from "../../src/core/bearer.js";
import { checkBind, isLoopbackHost } from "../../src/core/bind.js";
import { StreamSlots } from "../../src/core/stream-slots.js";

describe("who may do what", () => {
  it("grants each role exactly its accesses (the README's roles × actions table)", () => {
    const table = Object.fromEntries(
      (["caller", "approver", "admin"] as const).map((role) => [
        role,
        ACCESS_LEVELS.filter((access) => permits(role, access)),
      ]),
    );
    expect(table).toEqual({
      caller: ["health", "probe", "page", "discovery", "read", "call"],
      approver: ["health", "probe", "page", "discovery", "read", "approve"],
      admin: ["health", "probe", "page", "discovery", "read", "call", "approve", "admin"],
    });
    expect(ACCESS_BY_ROLE.admin).toEqual(ACCESS_LEVELS);
  });

  it("says who the token is, what it has and what it needs when it refuses", () => {
    expect(forbiddenMessage({ name: "ci-bot", role: "caller" }, "approve" satisfies Access)).toBe(
      'Forbidden: the token of ci-bot has role caller, and this needs approver or admin (access "approve"); use a token with one of those roles',
    );
  });
});

describe("bearer token", () => {
  it.each<[string | undefined, string | undefined]>([
    ["Bearer abc", "abc"],
    ["bearer  abc ", "abc"],
    ["Basic abc", undefined],
    ["Bearer", undefined],
    ["Bearer a b", undefined],
    [undefined, undefined],
  ])("%s → %s", (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});

describe("the loopback-or-tokens start-up rule", () => {
  it.each<[string, boolean]>([
    ["127.0.0.1", true],
    ["127.1.2.3", true],
    ["localhost", true],
    ["::1", true],
    ["[::1]", true],
    ["::ffff:127.0.0.1", true],
    ["0.0.0.0", false],
    ["::", false],
    ["192.168.1.10", false],
    ["127.0.0.1.evil.com", false],
  ])("%s is loopback: %s", (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });

  it("refuses a wildcard bind without tokens, unless tokens or allow_unauthenticated say otherwise", () => {
    const bind = (authenticated: boolean, allowUnauthenticated: boolean) =>
      checkBind({ host: "0.0.0.0", authenticated, allowUnauthenticated, what: "the gateway" });
    expect([bind(false, false), bind(true, false), bind(false, true)]).toEqual([
      {
        ok: false,
        message:
          "Refusing to start the gateway on 0.0.0.0 without bearer tokens: anyone who can reach that address could call tools and answer approvals. Set [gateway] tokens_env or [gateway.oauth], listen on 127.0.0.1, or set [gateway] allow_unauthenticated = true if something else guards it",
      },
      { ok: true },
      { ok: true },
    ]);
  });
});

describe("event-stream slots", () => {
  it("refuses a client past its own limit, and everyone past the total, and frees slots on release", () => {
    const slots = new StreamSlots({ total: 3, perClient: 2 });
    const a1 = slots.take("alice");
    const a2 = slots.take("alice");
    const a3 = slots.take("alice");
    const b1 = slots.take("bob");
    const c1 = slots.take("carol");
    expect([a1.ok, a2.ok, a3, b1.ok, c1]).toEqual([
      true,
      true,
      {
        ok: false,
        code: "server_unavailable",
        status: 429,
        message:
          "Too Many Requests: alice already has the most open event streams one client may hold (2, [gateway] max_streams_per_client); close one first",
      },
      true,
      {
        ok: false,
        code: "server_unavailable",
        status: 503,
        message:
          "Service Unavailable: this server holds its maximum of 3 open event streams ([gateway] max_streams); retry later",
      },
    ]);
    if (a1.ok) {
      a1.release();
      a1.release(); // twice frees one slot only
    }
    expect([slots.open, slots.take("carol").ok, slots.take("dave").ok]).toEqual([2, true, false]);
  });
});

describe("README.md", () => {
  it("shows exactly the roles × accesses table the guard enforces", async () => {
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const section = readme.split("## Roles × accesses")[1]!.split("\n## ")[0]!;
    const rows = [...section.matchAll(/^\| `(\w+)` +\|[^|]*\|(.*)\|$/gm)].map(([, access, cells]) => {
      const [caller, approver, admin, none] = cells!.split("|").map((cell) => cell.trim() === "✓");
      return { access, caller, approver, admin, none };
    });
    expect(rows).toEqual(
      ACCESS_LEVELS.map((access) => ({
        access,
        caller: permits("caller", access),
        approver: permits("approver", access),
        admin: permits("admin", access),
        none: !needsToken(access),
      })),
    );
  });
});
