import { describe, expect, it } from "vitest";
import { initializeRefusalMessage, jsonRpcRefusalIn } from "../../src/core/initialize-refusal.js";

describe("a server's refusal of initialize", () => {
  it("is read from a JSON-RPC error body, and nothing else is one (a legacy SSE server's 4xx)", () => {
    const body = '{"jsonrpc":"2.0","id":0,"error":{"code":-32600,"message":"Bad session"}}';
    expect(jsonRpcRefusalIn(`Error POSTing to endpoint: ${body}`)).toEqual({
      code: -32600,
      message: "Bad session",
    });
    expect(jsonRpcRefusalIn("Error POSTing to endpoint: Method Not Allowed")).toBeUndefined();
    expect(jsonRpcRefusalIn('Error POSTing to endpoint: {"error":"not found"}')).toBeUndefined();
    expect(jsonRpcRefusalIn("Error POSTing to endpoint: {not json")).toBeUndefined();
  });

  it("says which revisions a server of a newer revision speaks, and what to do; other refusals as the server said them", () => {
    expect(
      initializeRefusalMessage(
        { code: -32022, message: "Unsupported protocol version", data: { supported: ["2027-03-01"] } },
        "2025-11-25",
      ),
    ).toMatch(
      /JSON-RPC -32022\); it speaks only 2027-03-01, and toolbus connects .*2026-07-28: use a version of the server/,
    );
    expect(initializeRefusalMessage({ code: -32600, message: "Bad session" }, "2025-11-25")).toBe(
      "the server refused toolbus's initialize (protocol 2025-11-25): Bad session (JSON-RPC -32600)",
    );
  });
});
