/**
 * Tasks (the `io.modelcontextprotocol/tasks` extension of MCP 2026-07-28) over the call ledger.
 * A client that declares the extension gets a task instead of a long wait: when its call waits
 * for a human, or runs past `[gateway] task_after_ms`, the gateway keeps a task record (who may
 * see it, the call, the server's open question if any) and answers with the task's handle. The
 * task's state is the call's own: its reply in the dispatchers' ledger once it ended, its
 * approval waiting in the approvals service, else working; so any replica answers `tasks/get`,
 * whichever process died meanwhile. Only the principal that made a task, at the same endpoint,
 * may see, answer or cancel it; to anyone else it does not exist.
 */
import type { ApprovalRequest, CallElicitationRequest } from "@toolbus/protocol";
import { z } from "zod";
import { approvalElicitation } from "./approval-elicitation.js";
import { type McpCallResult, mcpCallResult } from "./call-result.js";
import { ElicitationQuestionSchema, HeldCallSchema, inputKey } from "./held-calls.js";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** How often a client is asked to poll a task. */
export const TASK_POLL_INTERVAL_MS = 1_000;

export const TaskRecordSchema = z.object({
  principal: z.string(),
  view: z.string().optional(),
  call: HeldCallSchema,
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  /** The server's elicitation the task waits on, until the client answers it. */
  question: ElicitationQuestionSchema.optional(),
  /** The client cancelled the task. */
  cancelled: z.boolean().optional(),
});
export type TaskRecord = z.infer<typeof TaskRecordSchema>;

/** Whether a client declared the tasks extension (its capabilities' `extensions`). */
export function declaresTasks(capabilities: Readonly<Record<string, unknown>>): boolean {
  const extensions = capabilities.extensions;
  if (extensions === null || typeof extensions !== "object") return false;
  const tasks = (extensions as Record<string, unknown>)[TASKS_EXTENSION];
  return tasks !== null && typeof tasks === "object";
}

/** The elicitation a task keeps, from the server's relayed request. */
export function taskQuestion(relayed: CallElicitationRequest & { relayId: string }): TaskRecord["question"] {
  return { kind: "elicitation", relayId: relayed.relayId, request: relayed.request };
}

interface TaskFields {
  taskId: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}

export type TaskState =
  | { status: "working" }
  | {
      status: "input_required";
      inputRequests: Record<string, { method: string; params: Record<string, unknown> }>;
    }
  | { status: "completed"; result: McpCallResult }
  | { status: "failed"; error: { code: number; message: string } }
  | { status: "cancelled" };

/** What `tools/call` answers when its call became a task. */
export function taskHandle(taskId: string, record: TaskRecord, ttlMs: number, status: TaskState["status"]) {
  return { resultType: "task" as const, ...fields(taskId, record, ttlMs), status };
}

/** What `tasks/get` answers. */
export function taskResult(taskId: string, record: TaskRecord, ttlMs: number, state: TaskState) {
  return { resultType: "complete" as const, ...fields(taskId, record, ttlMs), ...state };
}

/**
 * The task's state from what the call says now: its reply (it ended), the approval this client
 * may answer, the server's question the task keeps; else it is working. A cancelled task stays
 * cancelled, whatever its call answered on the way out.
 */
export function taskState(
  record: TaskRecord,
  now: {
    reply?: Parameters<typeof mcpCallResult>[0] | undefined;
    /** An approval of the call this client may answer. */
    approval?: ApprovalRequest | undefined;
  },
): TaskState {
  if (record.cancelled) return { status: "cancelled" };
  if (now.reply !== undefined) return { status: "completed", result: mcpCallResult(now.reply) };
  const inputRequests: Record<string, { method: string; params: Record<string, unknown> }> = {};
  if (now.approval !== undefined) {
    inputRequests[inputKey({ kind: "approval" })] = {
      method: "elicitation/create",
      params: approvalElicitation(now.approval),
    };
  }
  if (record.question !== undefined) {
    inputRequests[inputKey(record.question)] = {
      method: "elicitation/create",
      params: record.question.request,
    };
  }
  return Object.keys(inputRequests).length > 0
    ? { status: "input_required", inputRequests }
    : { status: "working" };
}

function fields(taskId: string, record: TaskRecord, ttlMs: number): TaskFields {
  return {
    taskId,
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    ttlMs,
    pollIntervalMs: TASK_POLL_INTERVAL_MS,
  };
}
