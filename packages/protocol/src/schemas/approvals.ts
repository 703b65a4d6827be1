/**
 * Approvals (docs/contract.md "Approvals", docs/reference-behavior.md §5): the dispatcher's `decide` and
 * `post_tool_use` requests, and the human side — pending requests, list, resolve, resolved,
 * and `cancel` (internal: the dispatcher withdraws a request whose call went away).
 */
import { z } from "zod";
import { CallToolResultSchema, ToolAnnotationsSchema } from "./mcp.js";
import {
  CursorSchema,
  FingerprintSchema,
  IdSchema,
  JsonValueSchema,
  MAX_ID_LENGTH,
  RequesterNameSchema,
  RequesterSchema,
  RevisionSchema,
  ServerNameSchema,
  ShortTextSchema,
  TimestampSchema,
} from "./primitives.js";

export const ApprovalDecision = {
  approved: "approved",
  approvedForSession: "approved_for_session",
  approvedAlways: "approved_always",
  denied: "denied",
  abort: "abort",
  timedOut: "timed_out",
} as const;
export type ApprovalDecision = (typeof ApprovalDecision)[keyof typeof ApprovalDecision];
export const ApprovalDecisionSchema = z.enum(ApprovalDecision);

/** What made the decision. */
export const ApprovalSource = {
  mode: "mode",
  annotations: "annotations",
  session: "session",
  persistent: "persistent",
  hook: "hook",
  human: "human",
  timeout: "timeout",
  policy: "policy",
} as const;
export type ApprovalSource = (typeof ApprovalSource)[keyof typeof ApprovalSource];

/** `<prefix>.approvals.decide`. `arguments` is the parsed JSON, `null` when there were none. */
export const ApprovalDecideRequestSchema = z.object({
  /**
   * How long the service waits for a human on this request before answering `timeout`
   * (retryable): the caller sends decide again with the same callId and re-attaches. Keeps every
   * wait short, so a caller whose approvals replica died notices within this and asks another.
   */
  waitMs: z.number().int().positive().optional(),
  callId: IdSchema,
  threadId: IdSchema.optional(),
  turnId: IdSchema.optional(),
  server: ServerNameSchema,
  /** The raw tool name. */
  tool: z.string(),
  hookName: z.string(),
  arguments: JsonValueSchema,
  annotations: ToolAnnotationsSchema.optional(),
  connectorId: z.string().optional(),
  connectorName: z.string().optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  fingerprint: FingerprintSchema,
  catalogRevision: RevisionSchema,
  strictAutoReview: z.boolean().optional(),
  requestedBy: RequesterSchema.optional(),
  requesterName: RequesterNameSchema.optional(),
});
export type ApprovalDecideRequest = z.infer<typeof ApprovalDecideRequestSchema>;

export const ApprovalDecideResultSchema = z.object({
  decision: ApprovalDecisionSchema,
  source: z.enum(ApprovalSource),
  /** For a denial: the text the model sees (e.g. `user rejected MCP tool call`). */
  message: z.string().optional(),
  /** A PreToolUse hook's rewrite of the input; the call uses it instead. */
  updatedArguments: JsonValueSchema.optional(),
  /**
   * Who answered, when a person did (`source: "user"`): the principal the edge authenticated, or
   * `user` for a person on the bus without one. The end event of the call names them.
   */
  decidedBy: RequesterSchema.optional(),
});
export type ApprovalDecideResult = z.infer<typeof ApprovalDecideResultSchema>;

/** `<prefix>.approvals.post_tool_use`: only sent when a PostToolUse hook matches `hookName`. */
export const PostToolUseRequestSchema = z.object({
  callId: IdSchema,
  threadId: IdSchema.optional(),
  turnId: IdSchema.optional(),
  hookName: z.string(),
  toolInput: JsonValueSchema,
  toolResponse: CallToolResultSchema,
});
export type PostToolUseRequest = z.infer<typeof PostToolUseRequestSchema>;

export const PostToolUseResultSchema = z.discriminatedUnion("block", [
  z.object({ block: z.literal(false) }),
  z.object({ block: z.literal(true), reason: z.string() }),
]);
export type PostToolUseResult = z.infer<typeof PostToolUseResultSchema>;

/** What a human may answer. */
export const ApprovalChoice = {
  allow: "allow",
  allowSession: "allow_session",
  allowAlways: "allow_always",
  decline: "decline",
  cancel: "cancel",
} as const;
export type ApprovalChoice = (typeof ApprovalChoice)[keyof typeof ApprovalChoice];
export const ApprovalChoiceSchema = z.enum(ApprovalChoice);

export const APPROVAL_HEADER = "Approve app tool call?";
export const APPROVAL_REQUEST_ID_PREFIX = "mcp_tool_call_approval_";

/** `mcp_tool_call_approval_<callId>`: the id of the approval request for a call. */
export function approvalRequestId(callId: string): string {
  return `${APPROVAL_REQUEST_ID_PREFIX}${callId}`;
}

/** Request ids are derived from call ids, so they may be longer by the prefix. */
export const ApprovalRequestIdSchema = z
  .string()
  .min(1)
  .max(MAX_ID_LENGTH + APPROVAL_REQUEST_ID_PREFIX.length);

export const ApprovalOptionSchema = z.object({
  id: ApprovalChoiceSchema,
  label: z.string(),
  description: z.string(),
});
export type ApprovalOption = z.infer<typeof ApprovalOptionSchema>;

/** `<prefix>.approvals.pending` (event): a call waiting for a human. */
export const ApprovalRequestSchema = z.object({
  requestId: ApprovalRequestIdSchema,
  callId: IdSchema,
  threadId: IdSchema.optional(),
  turnId: IdSchema.optional(),
  server: ServerNameSchema,
  tool: z.string(),
  hookName: z.string(),
  header: z.string(),
  /** `Allow the <server> MCP server to run tool "<tool>"?` */
  question: z.string(),
  options: z.array(ApprovalOptionSchema),
  arguments: JsonValueSchema,
  annotations: ToolAnnotationsSchema.optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  /**
   * `approvalCallDigest` of the call this request approves (its server, raw tool, fingerprint and
   * arguments as the caller sent them, before any PreToolUse rewrite): the answer applies to that
   * call only. Absent on requests stored before requests were bound to their call.
   */
  callDigest: FingerprintSchema.optional(),
  /** Who asked for the call (`RequesterSchema`): shown to approvers, and never its answerer unless self-approval is on. */
  requestedBy: RequesterSchema.optional(),
  /** The name the requester is shown by (`ToolCallRequest.requesterName`). */
  requesterName: RequesterNameSchema.optional(),
  createdAt: TimestampSchema,
  expiresAt: TimestampSchema,
});
export type ApprovalRequest = z.infer<typeof ApprovalRequestSchema>;

/** Requests in one page of `<prefix>.approvals.list` when the caller gives no `limit`, and at most. */
export const DEFAULT_APPROVALS_PAGE = 100;
export const MAX_APPROVALS_PAGE = 500;

/**
 * `<prefix>.approvals.list`: one page, oldest first. An empty body is the first page of
 * `DEFAULT_APPROVALS_PAGE`; `cursor` is the previous page's `nextCursor`; `callId`: only that
 * call's (what a task's caller is asked, on whichever gateway it polls).
 */
export const ApprovalsListRequestSchema = z.object({
  limit: z.int().min(1).max(MAX_APPROVALS_PAGE).optional(),
  cursor: CursorSchema.optional(),
  callId: IdSchema.optional(),
});
export type ApprovalsListRequest = z.infer<typeof ApprovalsListRequestSchema>;

/** `nextCursor` is there when more requests wait after this page. */
export const ApprovalsListResultSchema = z.object({
  pending: z.array(ApprovalRequestSchema),
  nextCursor: CursorSchema.optional(),
});
export type ApprovalsListResult = z.infer<typeof ApprovalsListResultSchema>;

/** Who answered an approval: a principal's name, or `user`, `timeout`, `cancel`. */
export const ApprovalResolverSchema = z.string().min(1).max(MAX_ID_LENGTH);

/**
 * Resolving twice or after expiry is a `bad_request` saying which. `by` is who answers (the
 * principal the HTTP edge authenticated; never taken from an HTTP body); absent: `user`.
 */
export const ApprovalResolveRequestSchema = z.object({
  requestId: ApprovalRequestIdSchema,
  choice: ApprovalChoiceSchema,
  by: ApprovalResolverSchema.optional(),
  /**
   * Whom `allow_always` allows: the call's requester (the default) or everyone. Only an approver
   * gives a grant to everyone: the edge sends `everyone` only for an approver's or admin's answer.
   */
  grantScope: z.enum(["requester", "everyone"]).optional(),
});
export type ApprovalResolveRequest = z.infer<typeof ApprovalResolveRequestSchema>;

export const ApprovalResolveResultSchema = z.object({ decision: ApprovalDecisionSchema });
export type ApprovalResolveResult = z.infer<typeof ApprovalResolveResultSchema>;

/** `<prefix>.approvals.resolved` (event). `by`: who answered (a principal's name, `user`, `timeout`, `cancel`). */
export const ApprovalResolvedEventSchema = z.object({
  requestId: ApprovalRequestIdSchema,
  callId: IdSchema,
  decision: ApprovalDecisionSchema,
  by: ApprovalResolverSchema,
});
export type ApprovalResolvedEvent = z.infer<typeof ApprovalResolvedEventSchema>;

/** `<prefix>.approvals.cancel`: withdraw the pending request of a call (its caller left). */
export const ApprovalCancelRequestSchema = z.object({
  callId: IdSchema,
  reason: ShortTextSchema.optional(),
});
export type ApprovalCancelRequest = z.infer<typeof ApprovalCancelRequestSchema>;

/** `cancelled` is false when nothing was pending for the call (already resolved or expired). */
export const ApprovalCancelResultSchema = z.object({ cancelled: z.boolean() });
export type ApprovalCancelResult = z.infer<typeof ApprovalCancelResultSchema>;

/** Threads whose session grants one `forget_threads` request may name (a session's own and its clients'). */
export const MAX_FORGET_THREADS = 64;

/**
 * `<prefix>.approvals.forget_threads`: the sessions these threads belonged to ended (an MCP
 * client ended or let expire its session), so their "Allow for this session" grants end too.
 */
export const ForgetThreadsRequestSchema = z.object({
  threadIds: z.array(IdSchema).min(1).max(MAX_FORGET_THREADS),
});
export type ForgetThreadsRequest = z.infer<typeof ForgetThreadsRequestSchema>;

/** How many session grants were forgotten (0 when the threads had none). */
export const ForgetThreadsResultSchema = z.object({ forgotten: z.int().nonnegative() });
export type ForgetThreadsResult = z.infer<typeof ForgetThreadsResultSchema>;
