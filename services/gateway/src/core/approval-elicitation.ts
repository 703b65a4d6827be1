/**
 * An approval request put to an MCP client as a form elicitation, in the reference's shape
 * (docs/reference-behavior.md §5.3), and the client's answer read back as an approval choice (§5.4).
 */
import type { ApprovalChoice, ApprovalRequest } from "@toolbus/protocol";

export const APPROVAL_KIND = "mcp_tool_call";

export interface ApprovalElicitParams {
  [key: string]: unknown;
  mode: "form";
  message: string;
  requestedSchema: { type: "object"; properties: Record<string, never> };
  _meta: Record<string, unknown>;
}

const LABEL_SESSION = "Allow for this session";
const LABEL_ALWAYS = "Allow and don't ask me again";
const LABEL_ALLOW = "Allow";
const LABEL_CANCEL = "Cancel";

export function approvalElicitation(request: ApprovalRequest): ApprovalElicitParams {
  const offered = new Set(request.options.map((option) => option.id));
  const persist = [
    ...(offered.has("allow_session") ? ["session"] : []),
    ...(offered.has("allow_always") ? ["always"] : []),
  ];
  const meta: Record<string, unknown> = { codex_approval_kind: APPROVAL_KIND };
  if (request.options.length > 0) {
    if (persist.length === 2) meta.persist = persist;
    else if (persist.length === 1) meta.persist = persist[0];
    if (request.title !== undefined) meta.tool_title = request.title;
    if (request.description !== undefined) meta.tool_description = request.description;
    meta.tool_params = request.arguments;
    meta.tool_params_display = paramsDisplay(request.arguments);
  }
  return {
    mode: "form",
    message: request.question,
    requestedSchema: { type: "object", properties: {} },
    _meta: meta,
  };
}

/** `[{name, value, display_name}]` for an object's fields, sorted by name. */
function paramsDisplay(args: unknown): Array<{ name: string; value: unknown; display_name: string }> {
  if (args === null || typeof args !== "object" || Array.isArray(args)) return [];
  return Object.keys(args)
    .sort()
    .map((name) => ({ name, value: (args as Record<string, unknown>)[name], display_name: name }));
}

export interface ElicitAnswer {
  [key: string]: unknown;
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown> | undefined;
  _meta?: Record<string, unknown> | undefined;
}

/**
 * decline → `decline`; cancel → `cancel`; accept with `_meta.persist` session/always → the
 * remembering choice; any other accept reads the answers in `content` (an accept without them
 * is a plain allow). A remembering choice the request did not offer falls back to a plain allow.
 */
export function approvalChoice(answer: ElicitAnswer, request: ApprovalRequest): ApprovalChoice {
  if (answer.action === "decline") return "decline";
  if (answer.action === "cancel") return "cancel";
  const offered = new Set(request.options.map((option) => option.id));
  const wanted = persistChoice(answer._meta?.persist) ?? answeredChoice(answer.content, request.requestId);
  return offered.has(wanted) ? wanted : "allow";
}

function persistChoice(persist: unknown): ApprovalChoice | undefined {
  if (persist === "session") return "allow_session";
  if (persist === "always") return "allow_always";
  return undefined;
}

function answeredChoice(content: Record<string, unknown> | undefined, requestId: string): ApprovalChoice {
  if (!content) return "allow";
  const own = content[requestId];
  const values = (own !== undefined ? [own] : Object.values(content)).flatMap((value) =>
    Array.isArray(value) ? value : [value],
  );
  const answers = new Set(values.filter((value): value is string => typeof value === "string"));
  if (answers.has(LABEL_SESSION)) return "allow_session";
  if (answers.has(LABEL_ALWAYS)) return "allow_always";
  if (answers.has(LABEL_ALLOW)) return "allow";
  // The reference reads an unmatched answer as Allow; an explicit Cancel is kept as a cancel.
  if (answers.has(LABEL_CANCEL)) return "cancel";
  return "allow";
}
