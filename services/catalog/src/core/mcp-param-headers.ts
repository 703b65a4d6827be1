/**
 * The `Mcp-Param-*` headers (SEP-2243) a `tools/call` to a 2026-07-28 server carries, built from
 * that server's own listing: each tool's `x-mcp-header` annotations as the server listed them,
 * and the call's arguments. Rules: @toolbus/protocol's mcp-param-headers.ts.
 *
 * The v2 client mirrors them itself only in `callTool`, from a `tools/list` it made through
 * `listTools()`; toolbus lists and calls with raw requests (it must not judge the server's
 * results), so it keeps the annotations here and hands the headers to each request.
 */
import { type McpParamDeclaration, mcpParamHeaders, scanMcpParams } from "@toolbus/protocol";

export class McpParamMirror {
  #declarations = new Map<string, McpParamDeclaration[]>();

  /**
   * A fresh listing (raw tools, as the server sent them) replaces what was known. A tool whose
   * annotations are invalid gets no headers: a client excludes such a tool, so there is no
   * right set of headers to send for it.
   */
  listed(tools: readonly unknown[]): void {
    const declarations = new Map<string, McpParamDeclaration[]>();
    for (const tool of tools) {
      if (!isRecord(tool) || typeof tool.name !== "string") continue;
      const scan = scanMcpParams(tool.inputSchema);
      if (scan.valid && scan.declarations.length > 0) declarations.set(tool.name, scan.declarations);
    }
    this.#declarations = declarations;
  }

  /** The headers for calling `tool` (its raw name) with `args`; empty when none are due. */
  headersFor(tool: string, args: unknown): Record<string, string> {
    const declarations = this.#declarations.get(tool);
    return declarations === undefined ? {} : mcpParamHeaders(declarations, args);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
