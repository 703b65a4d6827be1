import { REQUIRED_CLIENT_CAPABILITIES_META } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { capabilityRefusal } from "../../src/core/capability-refusal.js";

describe("a server's refusal for a capability its caller lacks (-32021)", () => {
  it("becomes an error result in the server's words, naming the capabilities in _meta", () => {
    const error = Object.assign(new Error("MCP error -32021: sampling is required"), {
      code: -32021,
      data: { requiredCapabilities: { sampling: {} } },
    });
    expect(capabilityRefusal(error, "docs")).toEqual({
      content: [
        {
          type: "text",
          text: "MCP server docs did not run the tool: the calling MCP client must declare sampling (sampling is required)",
        },
      ],
      isError: true,
      _meta: { [REQUIRED_CLIENT_CAPABILITIES_META]: { sampling: {} } },
    });
  });

  it("leaves every other error to be a failure", () => {
    expect([
      capabilityRefusal(Object.assign(new Error("bad"), { code: -32602 }), "docs"),
      capabilityRefusal(new Error("socket hang up"), "docs"),
      capabilityRefusal(undefined, "docs"),
    ]).toEqual([undefined, undefined, undefined]);
  });
});
