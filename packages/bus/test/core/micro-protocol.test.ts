import { describe, expect, it } from "vitest";
import {
  controlSubjects,
  emptyStats,
  identityProblem,
  recordRequest,
  type ServiceDescriptor,
  statsResponse,
} from "../../src/core/micro-protocol.js";

describe("identityProblem", () => {
  it.each([
    { kind: "service", name: "catalog", version: "1.2.3", expected: undefined },
    { kind: "service", name: "tool_bus-2", version: "0.1.0-rc.1+build.5", expected: undefined },
    {
      kind: "service",
      name: "tool.bus",
      version: "1.0.0",
      expected: 'service name "tool.bus" is not valid: use letters, digits, "-" and "_" only',
    },
    {
      kind: "service",
      name: "catalog",
      version: "1.0",
      expected: 'service version "1.0" is not valid: use semver, e.g. 1.2.3',
    },
    {
      kind: "endpoint",
      name: "get catalog",
      version: undefined,
      expected: 'endpoint name "get catalog" is not valid: use letters, digits, "-" and "_" only',
    },
  ] as const)("$kind $name@$version → $expected", ({ kind, name, version, expected }) => {
    expect(identityProblem(kind, name, version)).toBe(expected);
  });
});

describe("controlSubjects", () => {
  it("answers each verb for all services, by name, and by name and id", () => {
    expect(controlSubjects("catalog", "ID1").map((c) => c.subject)).toEqual([
      "$SRV.PING",
      "$SRV.PING.catalog",
      "$SRV.PING.catalog.ID1",
      "$SRV.INFO",
      "$SRV.INFO.catalog",
      "$SRV.INFO.catalog.ID1",
      "$SRV.STATS",
      "$SRV.STATS.catalog",
      "$SRV.STATS.catalog.ID1",
    ]);
  });
});

describe("statsResponse", () => {
  const service: ServiceDescriptor = {
    name: "catalog",
    id: "ID1",
    version: "1.0.0",
    description: "",
    metadata: {},
    started: "2026-01-01T00:00:00.000Z",
  };
  const endpoint = { name: "get", subject: "toolbus.catalog.get", queue_group: "catalog", metadata: {} };

  it("counts requests and errors, keeps the last error and averages the processing time", () => {
    const stats = emptyStats();
    recordRequest(stats, 1_000);
    recordRequest(stats, 3_000, "bad_request: callId: missing");
    recordRequest(stats, 2_000);
    expect(statsResponse(service, [{ endpoint, stats }])).toEqual({
      type: "io.nats.micro.v1.stats_response",
      name: "catalog",
      id: "ID1",
      version: "1.0.0",
      started: "2026-01-01T00:00:00.000Z",
      metadata: {},
      endpoints: [
        {
          name: "get",
          subject: "toolbus.catalog.get",
          queue_group: "catalog",
          num_requests: 3,
          num_errors: 1,
          last_error: "bad_request: callId: missing",
          processing_time: 6_000,
          average_processing_time: 2_000,
        },
      ],
    });
  });

  it("reports an average of zero before the first request", () => {
    expect(
      statsResponse(service, [{ endpoint, stats: emptyStats() }]).endpoints[0]?.average_processing_time,
    ).toBe(0);
  });
});
