/**
 * The catalog's resource subjects (`<prefix>.catalog.resources.list`,
 * `.resource_templates.list`, `.resources.read`), asked by the resource tools.
 */
import type { Bus } from "@toolbus/bus";
import {
  ResourcesListResultSchema,
  ResourcesReadResultSchema,
  ResourceTemplatesListResultSchema,
  type Subjects,
} from "@toolbus/protocol";
import type { ResourcesPort } from "../../ports.js";

/**
 * The catalog waits up to 60 s for the replica that owns a server (which bounds the server by
 * its tool timeout): a little longer, so the catalog's own answer arrives first.
 */
const RESOURCE_REQUEST_TIMEOUT_MS = 65_000;

export function createResourcesClient(bus: Bus, subjects: Subjects): ResourcesPort {
  const options = { timeoutMs: RESOURCE_REQUEST_TIMEOUT_MS };
  return {
    list: (request) =>
      bus.request(subjects.catalogResourcesList, request, ResourcesListResultSchema, options),
    templates: (request) =>
      bus.request(subjects.catalogResourceTemplatesList, request, ResourceTemplatesListResultSchema, options),
    read: (request) =>
      bus.request(subjects.catalogResourcesRead, request, ResourcesReadResultSchema, options),
  };
}
