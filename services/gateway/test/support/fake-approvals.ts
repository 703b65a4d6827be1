/**
 * A stand-in for the approvals service at its bus seam (the real one is built elsewhere): it
 * answers `approvals.decide` by publishing an `ApprovalRequest` on `approvals.pending` and
 * waiting for `approvals.resolve` or `approvals.cancel`, and records what it was sent. An answer
 * goes out on `approvals.resolved` before the waiting decide gets it (one order the real service
 * can take), so the gateway hears of it while the call still runs.
 */
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import {
  APPROVAL_HEADER,
  type ApprovalCancelRequest,
  type ApprovalChoice,
  type ApprovalDecideRequest,
  type ApprovalRequest,
  type ApprovalResolveRequest,
  approvalRequestId,
  okEnvelope,
  type Subjects,
} from "@toolbus/protocol";

export interface FakeApprovals {
  readonly pending: ApprovalRequest[];
  readonly resolves: ApprovalResolveRequest[];
  readonly cancels: ApprovalCancelRequest[];
  /** Answers the waiting decide with `choice` and publishes no `resolved` event (as if it were lost). */
  answerQuietly(requestId: string, choice: ApprovalChoice): void;
  stop(): void;
}

const DECISIONS: Record<ApprovalChoice, { decision: string; message?: string }> = {
  allow: { decision: "approved" },
  allow_session: { decision: "approved_for_session" },
  allow_always: { decision: "approved_always" },
  decline: { decision: "denied", message: "user rejected MCP tool call" },
  cancel: { decision: "abort", message: "user cancelled MCP tool call" },
};

export function fakeApprovals(nc: NatsConnection, subjects: Subjects): FakeApprovals {
  const pending: ApprovalRequest[] = [];
  const resolves: ApprovalResolveRequest[] = [];
  const cancels: ApprovalCancelRequest[] = [];
  const waiting = new Map<string, (choice: ApprovalChoice) => void>();
  const subscriptions: Subscription[] = [
    nc.subscribe(subjects.approvalsDecide, {
      queue: "approvals",
      callback: (_error, msg) => {
        const decide = msg.json<ApprovalDecideRequest>();
        const request: ApprovalRequest = {
          requestId: approvalRequestId(decide.callId),
          callId: decide.callId,
          server: decide.server,
          tool: decide.tool,
          hookName: decide.hookName,
          header: APPROVAL_HEADER,
          question: `Allow the ${decide.server} MCP server to run tool "${decide.tool}"?`,
          options: [
            { id: "allow", label: "Allow", description: "Run the tool and continue." },
            {
              id: "allow_session",
              label: "Allow for this session",
              description: "Run the tool and remember this choice for this session.",
            },
            { id: "cancel", label: "Cancel", description: "Cancel this tool call." },
          ],
          arguments: decide.arguments,
          ...(decide.description !== undefined ? { description: decide.description } : {}),
          createdAt: new Date().toISOString(),
          expiresAt: new Date(Date.now() + 600_000).toISOString(),
        };
        waiting.set(request.requestId, (choice) => {
          waiting.delete(request.requestId);
          msg.respond(JSON.stringify(okEnvelope({ ...DECISIONS[choice], source: "human" })));
        });
        pending.push(request);
        nc.publish(subjects.approvalsPending, JSON.stringify(request));
      },
    }),
    nc.subscribe(subjects.approvalsResolve, {
      queue: "approvals",
      callback: (_error, msg) => {
        const resolve = msg.json<ApprovalResolveRequest>();
        resolves.push(resolve);
        const callId = resolve.requestId.slice("mcp_tool_call_approval_".length);
        msg.respond(JSON.stringify(okEnvelope({ decision: DECISIONS[resolve.choice].decision })));
        nc.publish(
          subjects.approvalsResolved,
          JSON.stringify({
            requestId: resolve.requestId,
            callId,
            decision: DECISIONS[resolve.choice].decision,
            by: "test",
          }),
        );
        waiting.get(resolve.requestId)?.(resolve.choice);
      },
    }),
    nc.subscribe(subjects.approvalsCancel, {
      queue: "approvals",
      callback: (_error, msg) => {
        const cancel = msg.json<ApprovalCancelRequest>();
        cancels.push(cancel);
        const answer = waiting.get(approvalRequestId(cancel.callId));
        msg.respond(JSON.stringify(okEnvelope({ cancelled: answer !== undefined })));
        answer?.("cancel");
      },
    }),
  ];
  return {
    pending,
    resolves,
    cancels,
    answerQuietly(requestId, choice) {
      const answer = waiting.get(requestId);
      if (answer === undefined) throw new Error(`no decide waits on ${requestId}`);
      answer(choice);
    },
    stop() {
      for (const subscription of subscriptions) subscription.unsubscribe();
    },
  };
}
