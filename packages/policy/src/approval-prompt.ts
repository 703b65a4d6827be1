/**
 * The question put to a human (docs/reference-behavior.md §5.3): its id, header, question text, the options in
 * order and when each is offered, and how long it stays open. `decline` is never listed: it is the
 * answer of a human who refuses the form itself (an MCP elicitation's "decline"), which
 * `choiceToDecision` still accepts.
 */
import { APPROVAL_HEADER } from "@toolbus/protocol";
import type { ApprovalMode, ApprovalOption, ApprovalRequest, JsonValue, ToolAnnotations } from "./types.js";

export const APPROVAL_OPTIONS = {
  allow: { id: "allow", label: "Allow", description: "Run the tool and continue." },
  allowSession: {
    id: "allow_session",
    label: "Allow for this session",
    description: "Run the tool and remember this choice for this session.",
  },
  allowAlways: {
    id: "allow_always",
    label: "Allow and don't ask me again",
    description: "Run the tool and remember this choice for future tool calls.",
  },
  cancel: { id: "cancel", label: "Cancel", description: "Cancel this tool call." },
} as const satisfies Record<string, ApprovalOption>;

export function approvalRequestId(callId: string): string {
  return `mcp_tool_call_approval_${callId}`;
}

/** `Allow <actor> to run tool "<tool>"?`; the actor is the connector's name when it has one. */
export function approvalQuestion(server: string, tool: string, connectorName?: string): string {
  const connector = connectorName?.trim() ?? "";
  const actor = connector === "" ? `the ${server} MCP server` : connector;
  return collapseTrailingQuestionMarks(`Allow ${actor} to run tool "${tool}"?`);
}

export function collapseTrailingQuestionMarks(text: string): string {
  return `${text.replace(/\?+$/, "")}?`;
}

/** The remembering options exist only in mode `auto`, and each only when its key exists. */
export function approvalOptions(
  mode: ApprovalMode,
  hasSessionKey: boolean,
  hasPersistentKey: boolean,
): ApprovalOption[] {
  const options: ApprovalOption[] = [APPROVAL_OPTIONS.allow];
  if (mode === "auto" && hasSessionKey) options.push(APPROVAL_OPTIONS.allowSession);
  if (mode === "auto" && hasPersistentKey) options.push(APPROVAL_OPTIONS.allowAlways);
  options.push(APPROVAL_OPTIONS.cancel);
  return options;
}

export interface ApprovalPromptInput {
  callId: string;
  threadId?: string;
  turnId?: string;
  server: string;
  tool: string;
  hookName: string;
  connectorName?: string;
  arguments: JsonValue;
  annotations?: ToolAnnotations;
  title?: string;
  description?: string;
  /** `callDigestOf` the decide request: the call the answer applies to. */
  callDigest: string;
  /** Who asked for the call, when the edge knows, and the name they are shown by. */
  requestedBy?: string;
  requesterName?: string;
  mode: ApprovalMode;
  hasSessionKey: boolean;
  hasPersistentKey: boolean;
  /** Epoch milliseconds. */
  now: number;
  timeoutMs: number;
}

export function buildApprovalRequest(input: ApprovalPromptInput): ApprovalRequest {
  return {
    requestId: approvalRequestId(input.callId),
    callId: input.callId,
    ...optional("threadId", input.threadId),
    ...optional("turnId", input.turnId),
    server: input.server,
    tool: input.tool,
    hookName: input.hookName,
    header: APPROVAL_HEADER,
    question: approvalQuestion(input.server, input.tool, input.connectorName),
    options: approvalOptions(input.mode, input.hasSessionKey, input.hasPersistentKey),
    arguments: input.arguments,
    ...optional("annotations", input.annotations),
    ...optional("title", input.title),
    ...optional("description", input.description),
    callDigest: input.callDigest,
    ...optional("requestedBy", input.requestedBy),
    ...optional("requesterName", input.requesterName),
    createdAt: new Date(input.now).toISOString(),
    expiresAt: new Date(input.now + input.timeoutMs).toISOString(),
  };
}

/** `{key: value}`, or nothing when the value is absent, so results never carry `undefined` fields. */
function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return value === undefined ? {} : ({ [key]: value } as { [P in K]?: V });
}
