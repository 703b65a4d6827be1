// The settings every service reads alike: defaults, blanks as unset, --config over
// TOOLBUS_CONFIG, and every problem named by the variable a user sets.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConfigError, loadConfig } from "../src/config.js";
import {
  LOG_LEVELS,
  SERVICE_SETTINGS_ENV,
  ServiceSettingsSchema,
  serviceSettingsInput,
} from "../src/service-settings.js";

const load = (env: Record<string, string | undefined>, configFlag?: string) =>
  loadConfig(ServiceSettingsSchema, serviceSettingsInput(env, configFlag), SERVICE_SETTINGS_ENV);

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe("ServiceSettingsSchema", () => {
  it("fills every default from an empty environment", () => {
    expect(load({})).toEqual({ natsUrl: "nats://127.0.0.1:4222", prefix: "toolbus", logLevel: "info" });
  });

  it("reads each variable, treating empty and blank ones as unset and LOG_LEVEL in any case", () => {
    expect(
      load({
        NATS_URL: "nats://a:4222,nats://b:4222",
        TOOLBUS_PREFIX: "tenant_a",
        TOOLBUS_CONFIG: " ",
        LOG_LEVEL: " DEBUG ",
      }),
    ).toEqual({ natsUrl: "nats://a:4222,nats://b:4222", prefix: "tenant_a", logLevel: "debug" });
  });

  it("takes --config over TOOLBUS_CONFIG", () => {
    expect([
      load({ TOOLBUS_CONFIG: "from-env.toml" }).configPath,
      load({ TOOLBUS_CONFIG: "from-env.toml" }, "from-flag.toml").configPath,
    ]).toEqual(["from-env.toml", "from-flag.toml"]);
  });

  it("reports a bad prefix and a bad level at once, by the variables' names", () => {
    expect(problemsOf(() => load({ TOOLBUS_PREFIX: "a.b", LOG_LEVEL: "loud" }))).toEqual([
      "TOOLBUS_PREFIX: Invalid toolbus subject prefix \"a.b\": use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-' (no dots, wildcards or spaces), e.g. TOOLBUS_PREFIX=tenant_a",
      `LOG_LEVEL: must be one of ${LOG_LEVELS.join(", ")}`,
    ]);
  });

  it("extends with a service's own settings, which keep their own names", () => {
    const schema = ServiceSettingsSchema.extend({ port: z.coerce.number().int().min(1) });
    expect(
      problemsOf(() =>
        loadConfig(
          schema,
          { ...serviceSettingsInput({ LOG_LEVEL: "loud" }), port: "0" },
          SERVICE_SETTINGS_ENV,
        ),
      ),
    ).toEqual([
      `LOG_LEVEL: must be one of ${LOG_LEVELS.join(", ")}`,
      "port: Too small: expected number to be >=1",
    ]);
  });
});
