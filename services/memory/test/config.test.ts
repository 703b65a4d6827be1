import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "@toolbus/bus";
import { describe, expect, it } from "vitest";
import { loadMemoryConfig } from "../src/config.js";

const DATABASE_URL = "postgres://postgres@127.0.0.1:5432/test";

describe("loadMemoryConfig", () => {
  it("fills every default around the one required variable", () => {
    expect(loadMemoryConfig({ DATABASE_URL })).toEqual({
      natsUrl: "nats://127.0.0.1:4222",
      databaseUrl: DATABASE_URL,
      prefix: "toolbus",
      logLevel: "info",
      batchSize: 500,
      maxDeliveries: 5,
      redeliveryDelayMs: 1_000,
      ackWaitMs: 30_000,
    });
  });

  it("reads every variable, treating empty ones as unset", () => {
    expect(
      loadMemoryConfig({
        NATS_URL: "nats://nats:4222",
        DATABASE_URL,
        TOOLBUS_PREFIX: "tenant_a",
        LOG_LEVEL: " DEBUG ",
        MEMORY_BATCH_SIZE: "200",
        MEMORY_MAX_DELIVERIES: "3",
        MEMORY_REDELIVERY_DELAY_MS: "",
        MEMORY_ACK_WAIT_MS: "10000",
      }),
    ).toEqual({
      natsUrl: "nats://nats:4222",
      databaseUrl: DATABASE_URL,
      prefix: "tenant_a",
      logLevel: "debug",
      batchSize: 200,
      maxDeliveries: 3,
      redeliveryDelayMs: 1_000,
      ackWaitMs: 10_000,
    });
  });

  it("reports every problem at once", () => {
    let problems: readonly string[] = [];
    try {
      loadMemoryConfig({
        TOOLBUS_PREFIX: "a.b",
        LOG_LEVEL: "loud",
        MEMORY_BATCH_SIZE: "0",
        MEMORY_REDELIVERY_DELAY_MS: "5",
        MEMORY_MAX_DELIVERIES: "two",
      });
    } catch (err) {
      if (err instanceof ConfigError) problems = err.problems;
    }
    expect(problems).toEqual([
      "DATABASE_URL: missing; set it to the Postgres URL, e.g. postgres://user:pass@host:5432/db (or DATABASE_URL_FILE to a file holding it)",
      "TOOLBUS_PREFIX: Invalid toolbus subject prefix \"a.b\": use 1 to 64 characters from A-Z, a-z, 0-9, '_' and '-' (no dots, wildcards or spaces), e.g. TOOLBUS_PREFIX=tenant_a",
      "LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent",
      "MEMORY_BATCH_SIZE: must be a whole number of messages from 1 to 10000",
      "MEMORY_MAX_DELIVERIES: must be a whole number of deliveries from 1 to 1000",
      "MEMORY_REDELIVERY_DELAY_MS: must be a whole number of ms from 10 to 60000",
    ]);
  });

  it("rejects a database URL that is not postgres://", () => {
    expect(() => loadMemoryConfig({ DATABASE_URL: "mysql://x" })).toThrow(
      "DATABASE_URL: must be a postgres:// URL; put the schema in it with ?options=-c%20search_path%3D<schema> if needed",
    );
  });
});

describe("loadMemoryConfig with DATABASE_URL_FILE", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolbus-memory-config-"));
  const file = join(dir, "database-url");
  writeFileSync(file, `${DATABASE_URL}\n`, { mode: 0o600 });

  it("reads the database URL from the file", () => {
    expect(loadMemoryConfig({ DATABASE_URL_FILE: file }).databaseUrl).toBe(DATABASE_URL);
  });

  it("names the variable and the path when the file cannot be read", () => {
    expect(() => loadMemoryConfig({ DATABASE_URL_FILE: join(dir, "missing") })).toThrow(
      `DATABASE_URL_FILE=${join(dir, "missing")}: cannot read it (no such file); point it at a file holding DATABASE_URL's value`,
    );
  });

  it("refuses both the variable and the file", () => {
    expect(() => loadMemoryConfig({ DATABASE_URL, DATABASE_URL_FILE: file })).toThrow(
      "DATABASE_URL and DATABASE_URL_FILE are both set",
    );
  });
});

describe("loadMemoryConfig with a [memory] table", () => {
  const table = { batchSize: 50, maxDeliveries: 2, redeliveryDelayMs: 250, ackWaitMs: 60_000 };

  it("takes the table's values where no variable is set", () => {
    expect(loadMemoryConfig({ DATABASE_URL }, table)).toMatchObject(table);
  });

  it("lets a variable that is set win over the table", () => {
    expect(
      loadMemoryConfig({ DATABASE_URL, MEMORY_BATCH_SIZE: "7", MEMORY_ACK_WAIT_MS: "" }, table),
    ).toMatchObject({
      ...table,
      batchSize: 7,
    });
  });
});
