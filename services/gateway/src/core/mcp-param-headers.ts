/**
 * The 2026-07-28 edge's check of a `tools/call`'s `Mcp-Param-*` headers (SEP-2243) against its
 * arguments, by the `x-mcp-header` annotations of the tool as the gateway lists it (the
 * server's own `inputSchema`, passed through): a missing header, one whose Base64 is invalid, or
 * one that disagrees with the body is refused with HTTP 400 and `-32020` (HeaderMismatch), in
 * the shape the SDK refuses its standard headers with. Rules: @toolbus/protocol's
 * mcp-param-headers.ts.
 *
 * The SDK's handler does this only for tools registered on an `McpServer`; the gateway's servers
 * are low-level ones, so the edge asks before handing the request to the SDK. A handler's error
 * could not do it: the SDK answers those in-band, with HTTP 200.
 */
import { HEADER_MISMATCH, mcpParamMismatch, scanMcpParams } from "@toolbus/protocol";
import type { ListedTool } from "./tool-listing.js";

export interface ParamHeaderRefusal {
  status: 400;
  body: {
    jsonrpc: "2.0";
    id: string | number | null;
    error: { code: number; message: string; data: { mismatch: { header: string; body: string } } };
  };
}

/**
 * The refusal of a request whose `Mcp-Param-*` headers disagree with its body, or undefined
 * (not a `tools/call`, a tool the catalog does not list, no valid annotations, or all agree).
 * `headers`: as Node gives them, names in lower case. The listing is read only for a `tools/call`.
 */
export async function paramHeaderRefusal(
  body: unknown,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  listing: () => Promise<readonly ListedTool[]>,
): Promise<ParamHeaderRefusal | undefined> {
  if (!isRecord(body) || body.method !== "tools/call" || !isRecord(body.params)) return undefined;
  const { name, arguments: args } = body.params;
  if (typeof name !== "string") return undefined;
  // Without a catalog the call fails anyway, saying why; that error is the better answer.
  const tools = await listing().catch(() => []);
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) return undefined;
  // A tool with invalid annotations is one clients leave out: nothing of it is checked.
  const scan = scanMcpParams(tool.inputSchema);
  if (!scan.valid) return undefined;
  const mismatch = mcpParamMismatch(scan.declarations, args, (header) => {
    const value = headers[header];
    return Array.isArray(value) ? value.join(", ") : value;
  });
  if (mismatch === undefined) return undefined;
  const id = typeof body.id === "string" || typeof body.id === "number" ? body.id : null;
  return {
    status: 400,
    body: {
      jsonrpc: "2.0",
      id,
      error: {
        code: HEADER_MISMATCH,
        message: `Bad Request: the request headers and body disagree: ${mismatch.message}`,
        data: { mismatch: { header: mismatch.header, body: mismatch.message } },
      },
    },
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
