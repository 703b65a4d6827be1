// What `toolbus provision` sizes the JetStream assets by: the [bus] and [memory] tables, and the
// environment variables the services read for the same settings, so both agree.
import { describe, expect, it } from "vitest";
import { DEFAULT_SESSION_IDLE_TTL_MS, parseToolbusToml, provisionInputs } from "../src/index.js";

const tablesOf = (toml: string) => parseToolbusToml(toml, { path: "/test/toolbus.toml" });

describe("provisionInputs", () => {
  it("takes the defaults of the tables when nothing is set", () => {
    const config = tablesOf("");
    expect(provisionInputs(config, {})).toEqual({
      events: config.bus.events,
      memory: config.bus.memory,
      largeReplies: config.bus.largeReplies,
      gatewaySessionTtlMs: DEFAULT_SESSION_IDLE_TTL_MS,
      // A batch of 500 at most: the consumer hands out a few batches, and at least 1,000.
      memoryConsumer: { ackWaitMs: 30_000, maxAckPending: 2_000 },
    });
  });

  it("sizes the streams by the [bus] table and the memory consumer by the [memory] table", () => {
    const inputs = provisionInputs(
      tablesOf(
        [
          "[bus]",
          "events_max_age_sec = 7200",
          "events_max_bytes = 104857600",
          "",
          "[memory]",
          "batch_size = 2000",
          "ack_wait_sec = 45",
        ].join("\n"),
      ),
      {},
    );
    expect({ events: inputs.events, consumer: inputs.memoryConsumer }).toEqual({
      events: { maxAgeMs: 7_200_000, maxBytes: 104_857_600 },
      consumer: { ackWaitMs: 45_000, maxAckPending: 8_000 },
    });
  });

  it("reads the variables the services read for the same settings, over the tables", () => {
    const inputs = provisionInputs(tablesOf("[memory]\nbatch_size = 2000\n"), {
      MEMORY_BATCH_SIZE: "3000",
      MEMORY_ACK_WAIT_MS: "5000",
      TOOLBUS_GATEWAY_SESSION_TTL_SEC: "60",
    });
    expect({ ttl: inputs.gatewaySessionTtlMs, consumer: inputs.memoryConsumer }).toEqual({
      ttl: 60_000,
      consumer: { ackWaitMs: 5_000, maxAckPending: 12_000 },
    });
  });
});
