/**
 * What the resource tools answer (docs/reference-behavior.md §8): the payload in the reference's
 * shape (`{server, resources:[{server, …}], nextCursor?}` for one server's page, `{resources}`
 * for every server, `{server, uri, contents}` for a read), as JSON text truncated for the model
 * to policy × 1.2 with success true, and the messages of a call that failed.
 */
import {
  type ModelCapabilities,
  type ModelOutput,
  type ResourcesListResult,
  type ResourcesReadResult,
  type ResourceTemplatesListResult,
  ResourceToolName,
} from "@toolbus/protocol";
import { DEFAULT_TRUNCATION, MODEL_BUDGET_FACTOR } from "./model-output.js";
import { scalePolicy, truncateText } from "./truncate.js";

/** The MCP method behind each tool, which names it in a failure. */
export const RESOURCE_METHOD = {
  [ResourceToolName.listResources]: "resources/list",
  [ResourceToolName.listResourceTemplates]: "resources/templates/list",
  [ResourceToolName.readResource]: "resources/read",
} as const satisfies Record<ResourceToolName, string>;

export const CURSOR_WITHOUT_SERVER = "cursor can only be used when a server is specified";

export function unknownServerMessage(server: string): string {
  return `unknown MCP server '${server}'`;
}

/**
 * `<method> failed: <why>`. The catalog already puts that context in front of what the server
 * itself refused (`resources/read failed: resources/read failed for \`s\` (uri): …`, as the
 * reference's error chain reads), so a message that has it keeps it once.
 */
export function resourceFailure(tool: ResourceToolName, message: string): string {
  const method = RESOURCE_METHOD[tool];
  return message.startsWith(`${method} failed`) ? message : `${method} failed: ${message}`;
}

/** `server` first in each item, as the reference flattens a resource after its server. */
function serverFirst<T extends { server: string }>({ server, ...rest }: T): T {
  return { server, ...rest } as T;
}

export function listPayload(server: string | undefined, result: ResourcesListResult): object {
  const resources = result.resources.map(serverFirst);
  if (server === undefined) return { resources };
  return { server, resources, ...(result.nextCursor !== undefined ? { nextCursor: result.nextCursor } : {}) };
}

export function templatesPayload(server: string | undefined, result: ResourceTemplatesListResult): object {
  const resourceTemplates = result.resourceTemplates.map(serverFirst);
  if (server === undefined) return { resourceTemplates };
  return {
    server,
    resourceTemplates,
    ...(result.nextCursor !== undefined ? { nextCursor: result.nextCursor } : {}),
  };
}

export function readPayload(result: ResourcesReadResult): object {
  return { server: result.server, uri: result.uri, contents: result.contents };
}

/** The payload's JSON as the model gets it: middle-truncated to policy × 1.2, never a failure. */
export function resourceToolOutput(text: string, model: ModelCapabilities | undefined): ModelOutput {
  const policy = scalePolicy(model?.truncation ?? DEFAULT_TRUNCATION, MODEL_BUDGET_FACTOR);
  return { success: true, body: truncateText(text, policy) };
}
