/**
 * Tasks for 2026-07-28 clients that declare the extension (core/tasks.ts): a call handed back
 * becomes a task, kept in the gateway's store before its handle is returned, and `tasks/get`,
 * `tasks/update` and `tasks/cancel` answer from the call's own state on any replica. The replica
 * that made a task follows its call to the end and keeps the server's later questions on it.
 */
import type { Server, ServerContext } from "@modelcontextprotocol/server";
import type { Logger } from "@toolbus/bus";
import type { Principal } from "@toolbus/http-guard";
import { type ApprovalRequest, type ToolCallReply, WireError } from "@toolbus/protocol";
import { z } from "zod";
import { mayAnswerApproval } from "../../core/approval-authority.js";
import { approvalChoice } from "../../core/approval-elicitation.js";
import {
  APPROVAL_KEY,
  type ClientQuestion,
  elicitationAnswer,
  inputQuestion,
  roundAnswers,
} from "../../core/held-calls.js";
import { JsonRpcCode } from "../../core/jsonrpc-errors.js";
import { supportsElicitation } from "../../core/session-record.js";
import { type TaskRecord, type TaskState, taskHandle, taskResult, taskState } from "../../core/tasks.js";
import { type GatewayPorts, type HandedBack, type HeldCall, RequestFailure } from "../../ports.js";
import type { SessionStore } from "../nats/session-store.js";

export interface TaskDeps {
  store: Pick<SessionStore, "createTask" | "readTask" | "updateTask" | "forwardAnswer">;
  ports: Pick<GatewayPorts, "dispatch" | "approvals" | "calls">;
  view: string | undefined;
  /** How long a task is kept, and its reply with it. */
  ttlMs: number;
  elicitApprovals: boolean;
  selfApprove: boolean;
  logger: Logger;
  /** The tasks this replica made, by call id: where a server's later question is kept. */
  madeHere: MadeHere;
}

/** The tasks a replica made, by call id, at most `max` (the oldest forgotten first). */
export class MadeHere {
  readonly #tasks = new Map<string, string>();
  constructor(private readonly max = 10_000) {}
  set(callId: string, taskId: string): void {
    this.#tasks.set(callId, taskId);
    for (const oldest of this.#tasks.keys()) {
      if (this.#tasks.size <= this.max) break;
      this.#tasks.delete(oldest);
    }
  }
  get(callId: string): string | undefined {
    return this.#tasks.get(callId);
  }
}

/** The call handed back becomes a task: stored first, then its handle is the answer. */
export async function makeTask(
  call: HeldCall,
  question: ClientQuestion,
  principal: Principal,
  deps: TaskDeps,
): Promise<HandedBack> {
  const now = new Date().toISOString();
  const record: TaskRecord = {
    principal: principal.name,
    ...(deps.view === undefined ? {} : { view: deps.view }),
    call,
    createdAt: now,
    lastUpdatedAt: now,
    ...(question.kind === "input" ? { question: inputQuestion(question.relayed) } : {}),
  };
  const taskId = await deps.store.createTask(record);
  deps.madeHere.set(call.request.callId, taskId);
  deps.logger.info({ callId: call.request.callId, taskId }, "the call became a task");
  return taskHandle(taskId, record, deps.ttlMs, question.kind === "running" ? "working" : "input_required");
}

/** A server's question after its call became a task: kept on the task, for `tasks/get`. */
export async function keepLaterQuestion(
  callId: string,
  question: ClientQuestion,
  deps: TaskDeps,
): Promise<void> {
  const taskId = deps.madeHere.get(callId);
  if (taskId === undefined || question.kind !== "input") return;
  const kept = await deps.store
    .updateTask(taskId, (record) => ({ ...record, question: inputQuestion(question.relayed) }))
    .catch(() => false);
  if (!kept) deps.logger.warn({ callId, taskId }, "could not keep the server's question on its task");
}

const TaskIdParams = z.looseObject({ taskId: z.string() });

export function registerTaskHandlers(
  server: Server,
  principal: Principal,
  capabilitiesOf: (ctx: ServerContext) => Record<string, unknown>,
  deps: TaskDeps,
  run: <T>(work: () => Promise<T>) => Promise<T>,
): void {
  const asker = { principal: principal.name, view: deps.view };
  const find = async (taskId: string): Promise<TaskRecord> => {
    const record = await deps.store.readTask(taskId, asker);
    if (record === undefined) {
      throw new RequestFailure(
        JsonRpcCode.invalidParams,
        `Invalid params: no task ${taskId} of yours (it expired ${Math.round(deps.ttlMs / 60_000)} min after it was made, or never was); call the tool again`,
      );
    }
    return record;
  };
  /** The call's approval waiting for a human that this client may answer, if any. */
  const askable = async (record: TaskRecord, ctx: ServerContext): Promise<ApprovalRequest | undefined> => {
    if (!deps.elicitApprovals || !supportsElicitation(capabilitiesOf(ctx), "form")) return undefined;
    const pending = await deps.ports.approvals.pendingFor(record.call.request.callId);
    return pending.find((approval) => mayAnswerApproval(principal, approval, deps.selfApprove));
  };

  server.setRequestHandler("tasks/get", { params: TaskIdParams }, (params, ctx) =>
    run(async () => {
      const record = await find(params.taskId);
      let state: TaskState;
      try {
        const reply: ToolCallReply | undefined = record.cancelled
          ? undefined
          : await deps.ports.dispatch.poll(record.call.request);
        const approval = reply === undefined && !record.cancelled ? await askable(record, ctx) : undefined;
        state = taskState(record, { reply, approval });
      } catch (error) {
        if (!(error instanceof WireError)) throw error;
        state = { status: "failed", error: { code: JsonRpcCode.internalError, message: error.message } };
      }
      return taskResult(params.taskId, record, deps.ttlMs, state) as never;
    }),
  );

  server.setRequestHandler("tasks/update", { params: TaskIdParams }, (params, ctx) =>
    run(async () => {
      const record = await find(params.taskId);
      const { callId } = record.call.request;
      // The SDK lifts `inputResponses` out of the params it validates.
      const responses = ctx.mcpReq.inputResponses ?? {};
      const approvalAnswer = elicitationAnswer(responses[APPROVAL_KEY]);
      const question = record.question;
      // Answers to the server's round: any of its keys.
      const answersRound =
        question !== undefined && Object.keys(question.requests).some((key) => key in responses);
      if (approvalAnswer !== undefined) {
        const approval = await askable(record, ctx);
        if (approval === undefined) {
          throw new RequestFailure(
            JsonRpcCode.invalidParams,
            "Invalid params: the task waits for no approval you may answer (answered already, or not yours to answer); call tasks/get",
          );
        }
        await deps.ports.approvals.resolve(
          approval.requestId,
          approvalChoice(approvalAnswer, approval),
          principal.name,
        );
      }
      if (question !== undefined && answersRound) {
        const answered = roundAnswers(question.requests, responses);
        if (!answered.ok) throw new RequestFailure(JsonRpcCode.invalidParams, answered.message);
        deps.store.forwardAnswer(callId, question.relayId, answered.responses);
        await deps.store.updateTask(params.taskId, ({ question: _answered, ...rest }) => rest);
      }
      if (approvalAnswer === undefined && !answersRound) {
        throw new RequestFailure(
          JsonRpcCode.invalidParams,
          `Invalid params: inputResponses must answer the task's inputRequests (${[APPROVAL_KEY, ...Object.keys(question?.requests ?? {})].join(" or ")}), as tasks/get shows them; call tasks/get`,
        );
      }
      return { resultType: "complete" } as never;
    }),
  );

  server.setRequestHandler("tasks/cancel", { params: TaskIdParams }, (params) =>
    run(async () => {
      const record = await find(params.taskId);
      await deps.store.updateTask(params.taskId, (current) => ({ ...current, cancelled: true }));
      // The dispatcher running it withdraws its approval or stops its tool.
      deps.ports.calls.cancel(record.call.request.callId, "the MCP client cancelled the task");
      return { resultType: "complete" } as never;
    }),
  );
}
