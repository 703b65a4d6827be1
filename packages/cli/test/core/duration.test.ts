import { describe, expect, it } from "vitest";
import { formatClock, formatDuration, formatExpiry } from "../../src/core/duration.js";

describe("formatDuration", () => {
  it.each([
    [0, "0ms"],
    [12.4, "12ms"],
    [999.4, "999ms"],
    [999.6, "1.0s"],
    [3_249, "3.2s"],
    [59_949, "59.9s"],
    [59_960, "1m00s"],
    [65_000, "1m05s"],
    [3_599_000, "59m59s"],
    [3_599_600, "1h00m"],
    [3_600_000, "1h00m"],
    [7_380_000, "2h03m"],
    [-5, "0ms"],
  ])("%d ms reads %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe("formatExpiry", () => {
  const now = new Date("2030-01-01T00:00:00.000Z");
  it.each([
    ["2030-01-01T00:09:58.000Z", "in 9m58s"],
    ["2029-12-31T23:59:57.000Z", "expired 3.0s ago"],
    ["not a date", "not a date"],
  ])("%s is %s", (expiresAt, text) => {
    expect(formatExpiry(expiresAt, now)).toBe(text);
  });
});

describe("formatClock", () => {
  it("shows local hours, minutes, seconds and milliseconds, zero-padded", () => {
    expect(formatClock(new Date(2030, 0, 1, 9, 3, 4, 5))).toBe("09:03:04.005");
  });
});
