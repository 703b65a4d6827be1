/** Request/reply clients for the dispatcher and the catalog's resource, prompt and completion subjects. */
import type { Bus } from "@toolbus/bus";
import {
  CompleteResultSchema,
  GetPromptResultSchema,
  PromptsListResultSchema,
  ResourcesListResultSchema,
  ResourcesReadResultSchema,
  ResourceTemplatesListResultSchema,
  type Subjects,
  ToolCallReplySchema,
} from "@toolbus/protocol";
import type { DispatchPort, PromptsPort, ResourcesPort } from "../../ports.js";

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

export function promptsClient(bus: Bus, subjects: Subjects, timeoutMs: number): PromptsPort {
  return {
    async list() {
      const result = await bus.request(subjects.catalogPromptsList, {}, PromptsListResultSchema, {
        timeoutMs,
      });
      return result.prompts;
    },
    get: (server, name, args) =>
      bus.request(
        subjects.catalogPromptsGet,
        { server, name, ...(args !== undefined ? { arguments: args } : {}) },
        GetPromptResultSchema,
        { timeoutMs },
      ),
    complete: (request) =>
      bus.request(subjects.catalogCompletionComplete, request, CompleteResultSchema, { timeoutMs }),
  };
}
