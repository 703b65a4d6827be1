// README.md must not drift from the code: its configuration table lists exactly the
// variables the config schema reads, with their defaults.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadMemoryConfig, MemoryEnvVariables } from "../src/config.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

function configTable(): Array<{ variable: string; default: string }> {
  const section = readme.split("## Configuration")[1]?.split("\n## ")[0] ?? "";
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const [variable = "", defaultValue = ""] = line
        .split("|")
        .slice(1, 3)
        .map((cell) => cell.trim());
      return { variable: variable.replaceAll("`", ""), default: defaultValue.replaceAll("`", "") };
    });
}

describe("README.md", () => {
  it("documents every environment variable the service reads, and no other", () => {
    expect(
      configTable()
        .map((row) => row.variable)
        .sort(),
    ).toEqual(Object.keys(MemoryEnvVariables.shape).sort());
  });

  it("states the defaults the service applies", () => {
    const databaseUrl = "postgres://x@h/db";
    const config = loadMemoryConfig({ DATABASE_URL: databaseUrl });
    const applied: Record<string, string> = {
      NATS_URL: config.natsUrl,
      DATABASE_URL: "required",
      TOOLBUS_PREFIX: config.prefix,
      LOG_LEVEL: config.logLevel,
      MEMORY_BATCH_SIZE: String(config.batchSize),
      MEMORY_MAX_DELIVERIES: String(config.maxDeliveries),
      MEMORY_REDELIVERY_DELAY_MS: String(config.redeliveryDelayMs),
      MEMORY_ACK_WAIT_MS: String(config.ackWaitMs),
    };
    expect(Object.fromEntries(configTable().map((row) => [row.variable, row.default]))).toEqual(applied);
  });
});
