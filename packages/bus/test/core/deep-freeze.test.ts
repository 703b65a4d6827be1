import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { deepFreeze } from "../../src/core/deep-freeze.js";

function everyObjectFrozen(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(everyObjectFrozen);
}

describe("deepFreeze", () => {
  it("freezes every nested object and array and keeps the value equal", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = JSON.parse(JSON.stringify(value)) as unknown;
        const frozen = deepFreeze(copy);
        expect(everyObjectFrozen(frozen)).toBe(true);
        expect(frozen).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it("makes a nested write throw in strict mode", () => {
    const config = deepFreeze({ nats: { url: "nats://a" }, servers: ["x"] });
    expect(() => {
      (config.nats as { url: string }).url = "nats://b";
    }).toThrow(TypeError);
    expect(() => (config.servers as string[]).push("y")).toThrow(TypeError);
  });
});
