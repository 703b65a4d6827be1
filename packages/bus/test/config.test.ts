import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, loadConfig } from "../src/config.js";

const schema = z.object({
  NATS_URL: z.string().default("nats://127.0.0.1:4222"),
  DATABASE_URL: z.string({ error: "set DATABASE_URL to a postgres:// URL" }),
  PORT: z.coerce.number().int().min(1, "PORT must be 1-65535; pick a free port").max(65535),
  LOG_LEVEL: z.enum(["info", "debug"]).optional(),
  gateway: z.object({ tokens: z.array(z.string()) }).default({ tokens: [] }),
});

describe("loadConfig", () => {
  it("lists every problem at once, one line per field, each saying what to do", () => {
    let thrown: unknown;
    try {
      loadConfig(schema, { PORT: "0", LOG_LEVEL: "loud", gateway: { tokens: [1] } });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).message).toBe(
      [
        "invalid configuration (4 problems); fix each and start again:",
        "  - DATABASE_URL: set DATABASE_URL to a postgres:// URL",
        "  - PORT: PORT must be 1-65535; pick a free port",
        '  - LOG_LEVEL: Invalid option: expected one of "info"|"debug"',
        "  - gateway.tokens.0: Invalid input: expected string, received number",
      ].join("\n"),
    );
    expect((thrown as ConfigError).problems).toHaveLength(4);
  });

  it("says a field is missing and what type it wants when the schema gives no message", () => {
    expect(() => loadConfig(z.object({ TOOLBUS_PREFIX: z.string() }), {})).toThrow(
      "invalid configuration (1 problem); fix each and start again:\n  - TOOLBUS_PREFIX: missing; set it (expected string)",
    );
  });

  it("returns the parsed config with defaults, frozen all the way down", () => {
    const config = loadConfig(schema, { DATABASE_URL: "postgres://x", PORT: "8080", EXTRA: "dropped" });
    expect(config).toEqual({
      NATS_URL: "nats://127.0.0.1:4222",
      DATABASE_URL: "postgres://x",
      PORT: 8080,
      gateway: { tokens: [] },
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.gateway.tokens)).toBe(true);
  });
});

describe("loadConfig with the names a user sets", () => {
  it("names a top-level field by its variable in each problem, and leaves the rest of the path", () => {
    const settings = z.object({
      logLevel: z.enum(["info", "debug"]),
      limits: z.object({ depth: z.int().min(1) }),
      other: z.string(),
    });
    let problems: readonly string[] = [];
    try {
      loadConfig(
        settings,
        { logLevel: "loud", limits: { depth: 0 } },
        { logLevel: "LOG_LEVEL", limits: "TOOLBUS_LIMITS" },
      );
    } catch (err) {
      if (err instanceof ConfigError) problems = err.problems;
    }
    expect(problems).toEqual([
      'LOG_LEVEL: Invalid option: expected one of "info"|"debug"',
      "TOOLBUS_LIMITS.depth: Too small: expected number to be >=1",
      "other: missing; set it (expected string)",
    ]);
  });
});
