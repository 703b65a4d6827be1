/** Whether a call needs approval at all (docs/reference-behavior.md §5.1), and which mode applies to a tool (§1). */
import type { ApprovalMode, ToolAnnotations } from "./types.js";

/** `tools.<t>.approval_mode`, else the server's `default_tools_approval_mode`, else `auto`. */
export function resolveApprovalMode(toolMode?: ApprovalMode, serverDefault?: ApprovalMode): ApprovalMode {
  return toolMode ?? serverDefault ?? "auto";
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
