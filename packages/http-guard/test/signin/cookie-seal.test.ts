import { describe, expect, it } from "vitest";
import { CookieSeal } from "../../src/signin/cookie-seal.js";
import { SpentIds } from "../../src/signin/spent-ids.js";

const SECRET = "a-session-secret-of-at-least-32-characters";
const inAnHour = () => Math.floor(Date.now() / 1000) + 3600;

describe("a sealed cookie", () => {
  it("opens with the same secret, on any replica, as what was sealed", async () => {
    const sealed = await new CookieSeal(SECRET).seal("session", { sid: "s1", csrf: "c" }, inAnHour());
    const opened = await new CookieSeal(SECRET).open("session", sealed, 4000);
    expect(opened).toMatchObject({ ok: true, claims: { sid: "s1", csrf: "c" } });
    // Nothing of it can be read without the key.
    expect(Buffer.from(sealed.split(".")[3] ?? "", "base64url").toString("latin1")).not.toContain("s1");
  });

  it("does not open with another secret, a key of another process, or as another kind", async () => {
    const seal = new CookieSeal(SECRET);
    const sealed = await seal.seal("attempt", { state: "x" }, inAnHour());
    const refusals = await Promise.all([
      new CookieSeal(`${SECRET}!`).open("attempt", sealed, 4000),
      new CookieSeal(undefined).open("attempt", sealed, 4000),
      seal.open("session", sealed, 4000),
    ]);
    expect(refusals).toEqual(
      refusals.map(() => ({ ok: false, reason: "it was not made by this gateway (or was changed since)" })),
    );
  });

  it("does not open once changed in any part, expired, or too long", async () => {
    const seal = new CookieSeal(SECRET);
    const sealed = await seal.seal("session", { sid: "s1" }, inAnHour());
    const parts = sealed.split(".");
    const changed = parts.map((part, index) => {
      if (index === 1 || part === "") return undefined; // `dir` has no encrypted key
      const flipped = part.at(-2) === "A" ? "B" : "A";
      return parts
        .map((other, at) => (at === index ? `${part.slice(0, -2)}${flipped}${part.at(-1)}` : other))
        .join(".");
    });
    for (const value of changed) {
      if (value === undefined) continue;
      expect(await seal.open("session", value, 4000)).toMatchObject({ ok: false });
    }
    const expired = await seal.seal("session", { sid: "s1" }, Math.floor(Date.now() / 1000) - 10);
    expect([await seal.open("session", expired, 4000), await seal.open("session", sealed, 10)]).toEqual([
      { ok: false, reason: "it has expired" },
      { ok: false, reason: "it is longer than 10 bytes" },
    ]);
  });
});

describe("spent ids", () => {
  it("stay spent until they would have expired, and are bounded, the oldest going first", () => {
    const spent = new SpentIds(2);
    const now = 1_000;
    spent.add("a", now + 100, now);
    spent.add("b", now + 100, now);
    expect(spent.add("c", now + 100, now)).toEqual({ evicted: true });
    expect([spent.has("a", now), spent.has("b", now), spent.has("c", now), spent.size]).toEqual([
      false,
      true,
      true,
      2,
    ]);
    expect(spent.has("b", now + 100)).toBe(false);
    // An expired entry makes room for free.
    const quiet = new SpentIds(1);
    quiet.add("old", now + 1, now);
    expect(quiet.add("new", now + 100, now + 50)).toEqual({ evicted: false });
  });
});
