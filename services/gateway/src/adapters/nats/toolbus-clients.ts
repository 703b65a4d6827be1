/** Request/reply clients for the dispatcher and the catalog's resource, prompt and completion subjects. */
import type { KV } from "@nats-io/kv";
import { type Bus, HOLD_GRACE_MS, heldCall, watchedRecord, watchedRequest } from "@toolbus/bus";
import {
  CompleteResultSchema,
  PromptsGetResultSchema,
  PromptsListResultSchema,
  ResourcesListResultSchema,
  ResourcesReadResultSchema,
  ResourceTemplatesListResultSchema,
  type Subjects,
  ToolCallReplySchema,
  WireError,
} from "@toolbus/protocol";
import type { DispatchPort, PromptsPort, ResourcesPort } from "../../ports.js";

/**
 * `callTimeoutMs` must outlive the approval wait plus the tool timeout: the dispatcher answers
 * after both. Each send is held (`holdMs`): answered within the hold, and sent again until the
 * call's reply comes, so no reply outlives NATS's reply window however long a human takes. The
 * call's record in the dispatchers' ledger (`calls`, read only) is watched meanwhile: a
 * dispatcher that died mid-call, or a reply lost on the way, is noticed in seconds and the call
 * sent again with its callId — another dispatcher takes it over, and it runs once.
 */
export function dispatchClient(bus: Bus, subjects: Subjects, callTimeoutMs: number, calls: KV): DispatchPort {
  return {
    call: (request, options) =>
      heldCall(
        (holdMs, timeoutMs) =>
          watchedRequest(bus, subjects.dispatchCall, { ...request, holdMs }, ToolCallReplySchema, {
            timeoutMs,
            record: watchedRecord(calls, request.callId),
          }),
        {
          timeoutMs: callTimeoutMs,
          what: `call ${request.callId}`,
          ...(options?.signal ? { signal: options.signal } : {}),
        },
      ),
    poll: (request) =>
      watchedRequest(bus, subjects.dispatchCall, { ...request, holdMs: POLL_HOLD_MS }, ToolCallReplySchema, {
        timeoutMs: POLL_HOLD_MS + HOLD_GRACE_MS,
        record: watchedRecord(calls, request.callId),
      }).catch((error: unknown) => {
        // The dispatcher's "no answer yet": the call goes on.
        if (error instanceof WireError && error.code === "timeout" && error.retryable) return undefined;
        throw error;
      }),
  };
}

/** How long a poll waits for a call that is about to answer. */
const POLL_HOLD_MS = 250;

export function resourcesClient(bus: Bus, subjects: Subjects, timeoutMs: number): ResourcesPort {
  return {
    async list() {
      const result = await bus.request(subjects.catalogResourcesList, {}, ResourcesListResultSchema, {
        timeoutMs,
      });
      return result.resources;
    },
    async templates() {
      const result = await bus.request(
        subjects.catalogResourceTemplatesList,
        {},
        ResourceTemplatesListResultSchema,
        {
          timeoutMs,
        },
      );
      return result.resourceTemplates;
    },
    read: (server, uri) =>
      bus.request(subjects.catalogResourcesRead, { server, uri }, ResourcesReadResultSchema, { timeoutMs }),
  };
}

export function promptsClient(bus: Bus, subjects: Subjects, timeoutMs: number): PromptsPort {
  return {
    async list() {
      const result = await bus.request(subjects.catalogPromptsList, {}, PromptsListResultSchema, {
        timeoutMs,
      });
      return result.prompts;
    },
    get: (server, name, args, answers) =>
      bus.request(
        subjects.catalogPromptsGet,
        { server, name, ...(args !== undefined ? { arguments: args } : {}), ...answers },
        PromptsGetResultSchema,
        { timeoutMs },
      ),
    complete: (request) =>
      bus.request(subjects.catalogCompletionComplete, request, CompleteResultSchema, { timeoutMs }),
  };
}
