/**
 * The gateway's side of approvals: one subscription to `<prefix>.approvals.pending` and
 * `.resolved` for the whole process, fanned out by callId to the calls this replica runs;
 * `resolve` with the client's answer; `cancel` when the gateway stops with calls waiting;
 * `forgetThreads` when an MCP session ended (its session grants end with it) or a thread is bound
 * to a new principal (it starts with none).
 */
import type { Subscription } from "@nats-io/transport-node";
import type { Bus, Logger } from "@toolbus/bus";
import {
  ApprovalCancelResultSchema,
  ApprovalRequestSchema,
  ApprovalResolvedEventSchema,
  ApprovalResolveResultSchema,
  ApprovalsListResultSchema,
  ForgetThreadsResultSchema,
  MAX_FORGET_THREADS,
  type Subjects,
} from "@toolbus/protocol";
import type { ApprovalListener, ApprovalsPort } from "../../ports.js";

export interface ApprovalsClient extends ApprovalsPort {
  stop(): void;
}

export function approvalsClient(bus: Bus, subjects: Subjects, logger: Logger): ApprovalsClient {
  const listeners = new Map<string, Set<ApprovalListener>>();
  const each = (callId: string, fn: (listener: ApprovalListener) => void) => {
    for (const listener of listeners.get(callId) ?? []) fn(listener);
  };
  const subscriptions: Subscription[] = [
    bus.nc.subscribe(subjects.approvalsPending, {
      callback: (error, msg) => {
        if (error) return;
        const parsed = ApprovalRequestSchema.safeParse(safeJson(msg.string()));
        if (parsed.success) each(parsed.data.callId, (listener) => listener.pending(parsed.data));
      },
    }),
    bus.nc.subscribe(subjects.approvalsResolved, {
      callback: (error, msg) => {
        if (error) return;
        const parsed = ApprovalResolvedEventSchema.safeParse(safeJson(msg.string()));
        if (parsed.success) each(parsed.data.callId, (listener) => listener.resolved(parsed.data.requestId));
      },
    }),
  ];
  return {
    watch(callId, listener) {
      const set = listeners.get(callId) ?? new Set();
      set.add(listener);
      listeners.set(callId, set);
      return () => {
        set.delete(listener);
        if (set.size === 0) listeners.delete(callId);
      };
    },
    async pendingFor(callId) {
      const page = await bus.request(subjects.approvalsList, { callId }, ApprovalsListResultSchema, {
        timeoutMs: 10_000,
      });
      return page.pending;
    },
    async resolve(requestId, choice, by) {
      await bus.request(subjects.approvalsResolve, { requestId, choice, by }, ApprovalResolveResultSchema, {
        timeoutMs: 10_000,
      });
    },
    async cancel(callId, reason) {
      try {
        const result = await bus.request(
          subjects.approvalsCancel,
          { callId, reason },
          ApprovalCancelResultSchema,
          {
            timeoutMs: 5_000,
          },
        );
        logger.info(
          { callId, cancelled: result.cancelled },
          "asked approvals to withdraw the call's request",
        );
      } catch (err) {
        logger.info({ err, callId }, "could not withdraw the call's approval request");
      }
    },
    async forgetThreads(threadIds) {
      let forgotAll = true;
      for (let from = 0; from < threadIds.length; from += MAX_FORGET_THREADS) {
        const batch = threadIds.slice(from, from + MAX_FORGET_THREADS);
        try {
          const { forgotten } = await bus.request(
            subjects.approvalsForgetThreads,
            { threadIds: batch },
            ForgetThreadsResultSchema,
            { timeoutMs: 5_000 },
          );
          logger.info(
            { threads: batch.length, forgotten },
            "forgot the session grants of threads (their MCP session ended, or they were bound anew)",
          );
        } catch (err) {
          logger.warn(
            { err, threads: batch.length },
            "could not forget the session grants of threads; they stay in the grants bucket",
          );
          forgotAll = false;
        }
      }
      return forgotAll;
    },
    stop() {
      for (const subscription of subscriptions) subscription.unsubscribe();
      listeners.clear();
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
