/** Request/reply clients for the dispatcher and the catalog's resource subjects. */
import type { Bus } from "@toolbus/bus";
import {
  ResourcesListResultSchema,
  ResourcesReadResultSchema,
  ResourceTemplatesListResultSchema,
  type Subjects,
  ToolCallReplySchema,
} from "@toolbus/protocol";
import type { DispatchPort, ResourcesPort } from "../../ports.js";

/** `callTimeoutMs` must outlive the approval wait plus the tool timeout: the dispatcher answers after both. */
export function dispatchClient(bus: Bus, subjects: Subjects, callTimeoutMs: number): DispatchPort {
  return {
    call: (request) =>
      bus.request(subjects.dispatchCall, request, ToolCallReplySchema, { timeoutMs: callTimeoutMs }),
  };
}

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
