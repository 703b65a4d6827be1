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
import type { ApprovalRequest, InputRequest } from "@toolbus/protocol";
import { z } from "zod";
import { type McpCallResult, mcpCallResult } from "./call-result.js";
import { HeldCallSchema, InputQuestionSchema, inputRequests } from "./held-calls.js";

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** How often a client is asked to poll a task. */
export const TASK_POLL_INTERVAL_MS = 1_000;

export const TaskRecordSchema = z.object({
  principal: z.string(),
  view: z.string().optional(),
  call: HeldCallSchema,
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  /** The server's round of questions the task waits on, until the client answers it. */
  question: InputQuestionSchema.optional(),
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

interface TaskFields {
  taskId: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}

export type TaskState =
  | { status: "working" }
  | { status: "input_required"; inputRequests: Record<string, InputRequest> }
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
  // An approval comes before the tool runs, its server's questions while it runs: never both.
  const asked = {
    ...(now.approval !== undefined ? inputRequests({ kind: "approval", approval: now.approval }) : {}),
    ...(record.question !== undefined ? inputRequests(record.question) : {}),
  };
  return Object.keys(asked).length > 0
    ? { status: "input_required", inputRequests: asked }
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
