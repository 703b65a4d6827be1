/**
 * A stand-in for the approvals service's human side, on the real NATS: it answers
 * `<prefix>.approvals.list` and `.resolve` as docs/contract.md "Approvals" says (envelopes,
 * `bad_request` for a second answer), publishes `approvals.pending` / `approvals.resolved`,
 * and records every resolve it received.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import {
  type ApprovalChoice,
  type ApprovalDecision,
  type ApprovalRequest,
  ApprovalResolveRequestSchema,
  approvalRequestId,
  createSubjects,
} from "@toolbus/protocol";

const DECISIONS: Record<ApprovalChoice, ApprovalDecision> = {
  allow: "approved",
  allow_session: "approved_for_session",
  allow_always: "approved_always",
  decline: "denied",
  cancel: "abort",
};

export interface ApprovalsStandIn {
  readonly resolved: Array<{ requestId: string; choice: ApprovalChoice }>;
  /** Makes a request pending and publishes `approvals.pending`. */
  add(request: ApprovalRequest): void;
  /** Answers a request as another client would, publishing `approvals.resolved`. */
  resolveElsewhere(requestId: string, decision: ApprovalDecision, by: string): void;
  close(): Promise<void>;
}

export function approvalRequest(callId: string, overrides: Partial<ApprovalRequest> = {}): ApprovalRequest {
  return {
    requestId: approvalRequestId(callId),
    callId,
    server: "files",
    tool: "delete",
    hookName: "mcp__files__delete",
    header: "Approve app tool call?",
    question: 'Allow the files MCP server to run tool "delete"?',
    options: [
      { id: "allow", label: "Allow", description: "Run the tool and continue." },
      {
        id: "allow_session",
        label: "Allow for this session",
        description: "Run the tool and remember this choice for this session.",
      },
      { id: "cancel", label: "Cancel", description: "Cancel this tool call." },
    ],
    arguments: { path: "/tmp/x" },
    createdAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 10 * 60_000).toISOString(),
    ...overrides,
  };
}

export async function startApprovalsStandIn(natsUrl: string, prefix: string): Promise<ApprovalsStandIn> {
  const subjects = createSubjects(prefix);
  const nc: NatsConnection = await connect({ servers: natsUrl });
  const pending = new Map<string, ApprovalRequest>();
  const resolved: ApprovalsStandIn["resolved"] = [];
  const reply = (value: unknown) => JSON.stringify({ ok: true, result: value });
  const badRequest = (message: string) =>
    JSON.stringify({ ok: false, error: { code: "bad_request", message, retryable: false } });

  // Pages of two, whatever the limit asked, so every listing the CLI does crosses pages.
  nc.subscribe(subjects.approvalsList, {
    callback: (_error, msg) => {
      const { cursor } = msg.json<{ cursor?: string }>();
      const start = cursor === undefined ? 0 : Number(cursor);
      const all = [...pending.values()];
      const page = all.slice(start, start + 2);
      const more = start + 2 < all.length;
      msg.respond(reply({ pending: page, ...(more ? { nextCursor: String(start + 2) } : {}) }));
    },
  });
  nc.subscribe(subjects.approvalsResolve, {
    callback: (_error, msg) => {
      const parsed = ApprovalResolveRequestSchema.safeParse(msg.json());
      if (!parsed.success) {
        msg.respond(badRequest("requestId and choice are required"));
        return;
      }
      const { requestId, choice } = parsed.data;
      const request = pending.get(requestId);
      if (!request) {
        msg.respond(badRequest(`approval request ${requestId} was already resolved`));
        return;
      }
      pending.delete(requestId);
      resolved.push({ requestId, choice });
      const decision = DECISIONS[choice];
      nc.publish(
        subjects.approvalsResolved,
        JSON.stringify({ requestId, callId: request.callId, decision, by: "cli" }),
      );
      msg.respond(reply({ decision }));
    },
  });
  await nc.flush();
  return {
    resolved,
    add(request) {
      pending.set(request.requestId, request);
      nc.publish(subjects.approvalsPending, JSON.stringify(request));
    },
    resolveElsewhere(requestId, decision, by) {
      const request = pending.get(requestId);
      pending.delete(requestId);
      nc.publish(
        subjects.approvalsResolved,
        JSON.stringify({ requestId, callId: request?.callId ?? requestId, decision, by }),
      );
    },
    close: () => nc.close(),
  };
}
