/**
 * The dispatcher service: its catalog replica, the ports of the call path, duplicate-call
 * protection, the calls' cancellations (`<prefix>.calls.*.cancel`), the `toolbus.dispatch.call`
 * endpoint and the `toolbus.dispatch.history` replay.
 * Stateless: replicas share the queue group.
 */
import {
  answerWithin,
  type Bus,
  CALL_RECORD_TTL_MS,
  CallCancellations,
  CallLedger,
  followCancellations,
  type Logger,
  largeReplyOptions,
  type RunningService,
  StoredReplyAnswer,
  secondsSince,
  setLargeRepliesInFlightBytes,
  verifyAssets,
} from "@toolbus/bus";
import type { ToolbusConfig } from "@toolbus/config";
import {
  DispatchHistoryRequestSchema,
  identityOf,
  internalSubjects,
  principalRefusal,
  type Subjects,
  type ToolCallReply,
  ToolCallRequestSchema,
  WireError,
} from "@toolbus/protocol";
import { createApprovalsClient } from "./adapters/nats/approvals-client.js";
import { createCallEvents } from "./adapters/nats/call-events.js";
import { openCallHistoryIndex, replayThreadItems } from "./adapters/nats/call-history.js";
import { CatalogReplica } from "./adapters/nats/catalog-replica.js";
import { createConnectorClient } from "./adapters/nats/connector-client.js";
import { PolicyReplica } from "./adapters/nats/policy-replica.js";
import { createResourcesClient } from "./adapters/nats/resources-client.js";
import { callIdentity, createCallDeduper, HOST_SERVER_LABEL, parseToolArguments } from "./core/index.js";
import { callOnce } from "./handlers/call-once.js";
import { dispatchCall, reusedCallIdReply } from "./handlers/dispatch-call.js";
import { dispatcherRecorder } from "./metrics.js";

export const SERVICE_NAME = "dispatcher";

export interface DispatcherServiceDeps {
  bus: Bus;
  subjects: Subjects;
  config: ToolbusConfig;
  logger: Logger;
}

export interface DispatcherService extends RunningService {
  readonly catalog: CatalogReplica;
}

/**
 * A repeated callId within this window gets the first call's reply from this replica's memory,
 * without asking the call ledger; the callId reused for another call (tool or arguments) is
 * refused. Later repeats are answered by the ledger (CALL_RECORD_TTL_MS, cluster-wide), so the
 * window is short and the memory small: each remembered reply is held by the replica.
 */
const DEDUPE_TTL_MS = 60 * 1000;
/** How long a request waits for another replica already running its call before answering `timeout`. */
const CALL_WAIT_MS = 20 * 60 * 1000;
/**
 * Replies remembered at most (in flight ones included: one dropped keeps running, and its repeat
 * waits for it through the ledger). 10,000 held about 50 MB of a dispatcher's 215 MB after
 * `pnpm bench gateway`'s 12,000 calls; 500 left it at 166 MB.
 */
const DEDUPE_MAX_ENTRIES = 1_000;
/** How long a call naming a catalog revision this replica has not seen yet waits for it. */
const REVISION_WAIT_MS = 2_000;
/**
 * A cancellation of a call not running here is remembered this long (every replica hears it; a
 * replica taking the call over later starts it cancelled), and at most this many.
 */
const CANCEL_MEMORY = { rememberMs: CALL_RECORD_TTL_MS, maxRemembered: 10_000 };

export async function startDispatcherService(deps: DispatcherServiceDeps): Promise<DispatcherService> {
  const { bus, subjects, config, logger } = deps;
  const jsm = await bus.jsm();
  // Nothing starts on streams the provisioner did not make, or someone changed since.
  await verifyAssets(jsm, identityOf("dispatcher"), subjects);
  const largeReplies = largeReplyOptions(subjects, config.bus.largeReplies);
  setLargeRepliesInFlightBytes(config.bus.largeRepliesInFlightBytes);
  const catalog = await CatalogReplica.open({ bus, bucket: subjects.kv.catalog, logger });
  const internal = internalSubjects(subjects.prefix);
  const ledger = new CallLedger<ToolCallReply>({
    bus,
    kv: await bus.kv(internal.kv.calls),
    // Safe: the approval re-attaches by callId and the connector runs a callId once.
    onOrphan: "take over",
  });
  // The connectors write it; the dispatcher reads it to notice a connector that died mid-call.
  const executions = await bus.kv(internal.kv.executions);
  // The approvals service publishes the policy; until it has, nothing is settled here.
  const policy = await PolicyReplica.open({
    kv: await bus.kv(internal.kv.approvalPolicy),
    jsm,
    bucket: internal.kv.approvalPolicy,
    logger,
  });
  const history = await openCallHistoryIndex({ bus, subjects, logger });
  const events = createCallEvents(bus, subjects, history);
  const metrics = dispatcherRecorder();
  const cancellations = new CallCancellations({ now: () => Date.now(), ...CANCEL_MEMORY });
  const unfollow = followCancellations(bus, subjects.callCancelAll, cancellations, logger);
  const call = dispatchCall({
    catalog,
    resources: createResourcesClient(bus, subjects),
    approvals: createApprovalsClient({
      bus,
      subjects,
      policy: () => policy.current?.policy,
      defaultTimeoutMs: config.approvals.timeoutMs,
    }),
    connector: createConnectorClient({
      bus,
      subjects,
      executions,
      toolTimeoutMs: (server) => catalog.server(server)?.toolTimeoutMs ?? 300_000,
    }),
    events,
    cancellations,
    now: () => performance.now(),
    timestamp: () => new Date().toISOString(),
    revisionWaitMs: REVISION_WAIT_MS,
    staleRejected: metrics.staleRejected,
  });
  const deduper = createCallDeduper({
    ttlMs: DEDUPE_TTL_MS,
    maxEntries: DEDUPE_MAX_ENTRIES,
    now: () => Date.now(),
  });
  await bus.serve(
    {
      subject: subjects.dispatchCall,
      name: "dispatch-call",
      request: ToolCallRequestSchema,
      spanName: "toolbus.dispatch.call",
      // A raw result larger than one NATS message reaches the caller through the large-replies stream.
      largeReplies,
      // Who asked (`requestedBy`) is believed only from the gateway.
      taggedBySender: true,
    },
    (request, ctx) => {
      const refused = principalRefusal(ctx.sender, "requestedBy", request.requestedBy);
      if (refused !== undefined) throw new WireError("unauthorized", refused);
      const parsed = parseToolArguments(request.arguments);
      const identity = callIdentity(request.tool, parsed, request.arguments);
      const reused = () => reusedCallIdReply(request, catalog.revision);
      // A reply stored for being larger than one message is remembered as where it was stored,
      // not as itself: a repeat is answered with the stored reply, and 15 MiB go from memory.
      void ctx.sent.then(({ stored }) => {
        if (stored) deduper.remember(request.callId, identity, new StoredReplyAnswer(stored));
      });
      // This replica's memory first (no round trip), then the cluster's ledger.
      const answer = deduper.run<ToolCallReply | StoredReplyAnswer>(
        request.callId,
        identity,
        () =>
          callOnce({
            ledger,
            // A held request stops waiting when it is answered; its repeat waits again.
            waitMs: request.holdMs ?? CALL_WAIT_MS,
            reused,
            run: async () => {
              const started = performance.now();
              const reply = await call(request, ctx, parsed);
              metrics.call(reply.server ?? HOST_SERVER_LABEL, reply.status, secondsSince(started));
              return reply;
            },
          })(request, identity, ctx),
        reused,
      );
      return answerWithin(
        answer,
        request.holdMs,
        `call ${request.callId} has no reply yet (it may wait for an approval or for its tool); send it again with the same callId for its reply`,
      );
    },
  );
  await bus.serve(
    {
      subject: subjects.dispatchHistory,
      name: "dispatch-history",
      request: DispatchHistoryRequestSchema,
      spanName: "toolbus.dispatch.history",
    },
    async ({ threadId }) => ({ items: await replayThreadItems({ bus, subjects, threadId }) }),
  );
  return {
    catalog,
    drain: (options) => bus.drain(options),
    async stop() {
      unfollow();
      catalog.stop();
      policy.stop();
      events.flush();
      history.stop();
    },
  };
}
