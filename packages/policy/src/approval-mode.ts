/**
 * The approval-mode rule: which mode applies to a tool (docs/reference-behavior.md §1), and whether a call in that
 * mode needs approval at all (§5.1). The one place either is written.
 */
import { z } from "zod";
import {
  APPROVAL_MODE_ALIASES,
  APPROVAL_MODES,
  type ApprovalMode,
  type ApprovalModeAlias,
  type ToolAnnotations,
} from "./types.js";

/** A mode as configured: one of `APPROVAL_MODES` or an alias of one, read as the mode it names. */
export const ApprovalModeSchema = z
  .enum([...APPROVAL_MODES, ...(Object.keys(APPROVAL_MODE_ALIASES) as ApprovalModeAlias[])])
  .transform(
    (mode): ApprovalMode =>
      Object.hasOwn(APPROVAL_MODE_ALIASES, mode)
        ? APPROVAL_MODE_ALIASES[mode as ApprovalModeAlias]
        : (mode as ApprovalMode),
  );

/** The part of `[mcp_servers.<name>]` that sets modes (a parsed server config fits as it is). */
export const ServerModesSchema = z.object({
  defaultToolsApprovalMode: ApprovalModeSchema.default("auto"),
  tools: z.record(z.string(), z.object({ approvalMode: ApprovalModeSchema.optional() })).default({}),
});
export type ServerModes = z.output<typeof ServerModesSchema>;

/** `tools.<t>.approval_mode`, else the server's `default_tools_approval_mode`, else `auto`. */
export function resolveApprovalMode(toolMode?: ApprovalMode, serverDefault?: ApprovalMode): ApprovalMode {
  return toolMode ?? serverDefault ?? "auto";
}

/** The effective mode of `tool` on `server`; a server not listed is `auto` for every tool. */
export function approvalModeOf(
  servers: Readonly<Record<string, ServerModes>>,
  server: string,
  tool: string,
): ApprovalMode {
  const entry = Object.hasOwn(servers, server) ? servers[server] : undefined;
  if (entry === undefined) return resolveApprovalMode();
  const perTool = Object.hasOwn(entry.tools, tool) ? entry.tools[tool]?.approvalMode : undefined;
  return resolveApprovalMode(perTool, entry.defaultToolsApprovalMode);
}

/** Only the mode settings of each server, e.g. of a parsed toolbus.toml's `mcpServers`. */
export function serverModesOf(
  servers: Readonly<Record<string, Readonly<ServerModes>>>,
): Record<string, ServerModes> {
  const modes: Record<string, ServerModes> = {};
  for (const [name, server] of Object.entries(servers)) {
    modes[name] = {
      defaultToolsApprovalMode: server.defaultToolsApprovalMode,
      tools: Object.fromEntries(
        Object.entries(server.tools).map(([tool, settings]) => [
          tool,
          settings.approvalMode === undefined ? {} : { approvalMode: settings.approvalMode },
        ]),
      ),
    };
  }
  return modes;
}

export function approvalRequired(mode: ApprovalMode, annotations?: ToolAnnotations | null): boolean {
  switch (mode) {
    case "approve":
      return false;
    case "prompt":
      return true;
    case "writes":
      return annotations?.readOnlyHint !== true;
    case "auto":
      return autoRequiresApproval(annotations);
  }
}

// A tool that says nothing about itself is treated as one that may write to the open world.
function autoRequiresApproval(annotations: ToolAnnotations | null | undefined): boolean {
  if (annotations === undefined || annotations === null) return true;
  if (annotations.destructiveHint === true) return true;
  if (annotations.readOnlyHint === true) return false;
  return annotations.destructiveHint !== false || annotations.openWorldHint !== false;
}
