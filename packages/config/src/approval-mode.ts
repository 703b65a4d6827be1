/** Which approval mode governs one tool of one server. */
import type { ApprovalMode, McpServerCommon } from "./mcp-server.js";

/** `tools.<t>.approval_mode`, else the server's `default_tools_approval_mode` (itself `auto` when unset). */
export function effectiveApprovalMode(
  server: Pick<McpServerCommon, "tools" | "defaultToolsApprovalMode">,
  rawTool: string,
): ApprovalMode {
  const perTool = Object.hasOwn(server.tools, rawTool) ? server.tools[rawTool]?.approvalMode : undefined;
  return perTool ?? server.defaultToolsApprovalMode;
}
