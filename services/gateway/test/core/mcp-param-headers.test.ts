// The 2026-07-28 edge's Mcp-Param-* check (SEP-2243): which requests it refuses, with what, and
// that the gateway's listing keeps the x-mcp-header annotations the check and clients read.
import { buildExposedNames, type ToolEntry } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { paramHeaderRefusal } from "../../src/core/mcp-param-headers.js";
import { type ListedTool, listedTools } from "../../src/core/tool-listing.js";

const inputSchema = {
  type: "object" as const,
  properties: {
    region: { type: "string", "x-mcp-header": "Region" },
    priority: { type: "integer", "x-mcp-header": "Priority" },
    query: { type: "string" },
  },
};
const tools: ListedTool[] = [
  { name: "geo__route", description: "Routes.", inputSchema },
  {
    name: "geo__invalid",
    description: "A tool clients leave out.",
    inputSchema: { type: "object", properties: { score: { type: "number", "x-mcp-header": "Score" } } },
  },
];
const listing = async () => tools;
const call = (name: string, args: Record<string, unknown>, id: number | string = 7) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args },
});

describe("paramHeaderRefusal", () => {
  it("lets through a call whose headers match its arguments", async () => {
    const headers = { "mcp-param-region": "=?base64?SGVsbG8sIOS4lueVjA==?=", "mcp-param-priority": "42" };
    expect(
      await paramHeaderRefusal(call("geo__route", { region: "Hello, 世界", priority: 42 }), headers, listing),
    ).toBeUndefined();
  });

  it("refuses a missing header with 400 and -32020, under the request's id", async () => {
    expect(await paramHeaderRefusal(call("geo__route", { region: "eu" }, "r-1"), {}, listing)).toEqual({
      status: 400,
      body: {
        jsonrpc: "2.0",
        id: "r-1",
        error: {
          code: -32020,
          message:
            "Bad Request: the request headers and body disagree: arguments.region is in the body but the Mcp-Param-Region header is missing",
          data: {
            mismatch: {
              header: "Mcp-Param-Region",
              body: "arguments.region is in the body but the Mcp-Param-Region header is missing",
            },
          },
        },
      },
    });
  });

  it("refuses a header that disagrees with the body, and one with invalid Base64", async () => {
    const mismatched = await paramHeaderRefusal(
      call("geo__route", { region: "eu" }),
      { "mcp-param-region": "us" },
      listing,
    );
    const badBase64 = await paramHeaderRefusal(
      call("geo__route", { region: "Hello" }),
      { "mcp-param-region": "=?base64?SGVsbG8?=" },
      listing,
    );
    expect([
      mismatched?.status,
      mismatched?.body.error.code,
      badBase64?.status,
      badBase64?.body.error.code,
    ]).toEqual([400, -32020, 400, -32020]);
  });

  it("leaves alone what it cannot judge: other methods, unknown tools, invalid annotations, no catalog", async () => {
    const refusals = await Promise.all([
      paramHeaderRefusal({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }, {}, listing),
      paramHeaderRefusal(call("geo__unknown", { region: "eu" }), {}, listing),
      paramHeaderRefusal(call("geo__invalid", { score: 1.5 }), {}, listing),
      paramHeaderRefusal(call("geo__route", { region: "eu" }), {}, () =>
        Promise.reject(new Error("no catalog")),
      ),
      paramHeaderRefusal([call("geo__route", { region: "eu" })], {}, listing),
    ]);
    expect(refusals).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  it("reads the catalog for tools/call alone", async () => {
    let reads = 0;
    const counted = async () => {
      reads += 1;
      return tools;
    };
    await paramHeaderRefusal(
      { jsonrpc: "2.0", id: 1, method: "resources/read", params: { uri: "x" } },
      {},
      counted,
    );
    await paramHeaderRefusal(call("geo__route", {}), {}, counted);
    expect(reads).toBe(1);
  });
});

describe("listedTools", () => {
  it("keeps a server's x-mcp-header annotations, nested ones too, as the server listed them", () => {
    const schema = {
      properties: {
        region: { type: "string", "x-mcp-header": "Region" },
        target: { type: "object", properties: { zone: { type: "string", "x-mcp-header": "Zone" } } },
      },
    };
    const entry: ToolEntry = {
      server: "geo",
      rawName: "route",
      callableNamespace: "mcp__geo",
      callableName: "route",
      flatName: "mcp__geo__route",
      hookName: "mcp__geo__route",
      fingerprint: "0".repeat(64),
      revision: 1,
      description: "Routes.",
      inputSchema: schema,
      supportsParallel: false,
      exposure: "direct",
    };
    const [listed] = listedTools(buildExposedNames([entry], "prefixed"));
    expect(listed?.inputSchema).toEqual({ type: "object", ...schema });
  });
});
