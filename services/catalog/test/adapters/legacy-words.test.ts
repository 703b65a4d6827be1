// A 2025-era connection's errors from the v2 client read as they did under the v1 SDK.

import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError } from "@modelcontextprotocol/client";
import { describe, expect, it } from "vitest";
import { inLegacyWords } from "../../src/adapters/mcp/legacy-words.js";
import { isRequestTimeout } from "../../src/core/mcp-errors.js";

describe("inLegacyWords", () => {
  it("words a server's JSON-RPC error as `MCP error <code>: <message>`, code and data kept", () => {
    const error = inLegacyWords(new ProtocolError(-32602, "Unknown prompt: nope", { name: "nope" }));
    expect(error).toMatchObject({
      message: "MCP error -32602: Unknown prompt: nope",
      code: -32602,
      data: { name: "nope" },
    });
  });

  it("gives the SDK's closed connection and timeout the codes they had (-32000, -32001)", () => {
    const closed = inLegacyWords(new SdkError(SdkErrorCode.ConnectionClosed, "Connection closed"));
    expect(closed).toMatchObject({ message: "MCP error -32000: Connection closed", code: -32000 });
    const timeout = inLegacyWords(
      new SdkError(SdkErrorCode.RequestTimeout, "Request timed out", { timeout: 200 }),
    );
    expect(timeout).toMatchObject({ message: "MCP error -32001: Request timed out", code: -32001 });
    expect(isRequestTimeout(timeout)).toBe(true);
  });

  it("words an HTTP refusal as the streamable HTTP transport did, its status the code", () => {
    const refused = new SdkHttpError(
      SdkErrorCode.ClientHttpNotImplemented,
      "Error POSTing to endpoint: Unauthorized",
      {
        status: 401,
      },
    );
    expect(inLegacyWords(refused)).toMatchObject({
      message: "Streamable HTTP error: Error POSTing to endpoint: Unauthorized",
      code: 401,
    });
  });

  it("leaves anything else as it is", () => {
    const other = new Error("spawn nope ENOENT");
    expect(inLegacyWords(other)).toBe(other);
    const notConnected = new SdkError(SdkErrorCode.NotConnected, "Not connected");
    expect(inLegacyWords(notConnected)).toBe(notConnected);
  });
});
