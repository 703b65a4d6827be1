/**
 * Prompts and completions. Like resources (and unlike tools), prompts are listed live from the
 * servers rather than stored in the catalog bucket: nothing on the call path reads them, so
 * storing them would only make every entry write, and every KV watcher (the dispatchers), carry
 * each server's prompt texts, and a live listing is never stale. The entry keeps only whether
 * the server declared `prompts` and `completions`, so a listing of every server asks only those
 * that have some. The public `catalog.prompts.*` and `catalog.completion.complete` subjects can
 * be served by any replica; each hands the server's part to the replica that owns the server
 * over `<prefix>.connector.<server>.*`, as resources do.
 */
import type { Bus, HandlerContext } from "@toolbus/bus";
import {
  type CompleteResult,
  CompleteResultSchema,
  type CompletionCompleteRequest,
  formatZodIssues,
  internalSubjects,
  PromptSchema,
  type PromptsGetRequest,
  type PromptsGetResult,
  PromptsGetResultSchema,
  type PromptsListRequest,
  type PromptsListResult,
  type ServerPrompt,
  WireError,
} from "@toolbus/protocol";
import type { z } from "zod";
import { errorChain, isOversized, isRequestTimeout, oversizedText } from "../core/mcp-errors.js";
import { formatDuration } from "../core/startup-messages.js";
import type { CatalogEntries, OwnedServer } from "../ports.js";
import {
  knownServer,
  type OwnerCompleteRequestSchema,
  OwnerListResultSchema,
  type OwnerPromptsGetRequestSchema,
  type OwnerPromptsListRequestSchema,
  readyConnection,
} from "./owner-subjects.js";

/** JSON-RPC "invalid params": the server refused what was asked (unknown prompt, missing argument). */
const INVALID_PARAMS = -32602;
const NO_COMPLETION: CompleteResult = { completion: { values: [], hasMore: false } };

/** Served by the replica that owns the server. */
export function ownerPromptHandlers(connector: OwnedServer) {
  const { server, toolTimeoutMs } = connector.settings;
  /** The server's failure as a wire error; `context` says which request on which server. */
  const failure = (context: string, error: unknown): WireError => {
    if (isRequestTimeout(error))
      return new WireError("timeout", `${context}: timed out after ${formatDuration(toolTimeoutMs)}`);
    if (isOversized(error)) return new WireError("payload_too_large", `${context}: ${oversizedText(error)}`);
    if ((error as { code?: unknown }).code === INVALID_PARAMS)
      return new WireError("bad_request", `${context}: ${errorChain(error)}`);
    return new WireError("transport_error", `${context}: ${errorChain(error)}`);
  };
  /** A result the server sent that is not what MCP says it should be. */
  const checked = <S extends z.ZodType>(schema: S, result: unknown, context: string): z.output<S> => {
    const parsed = schema.safeParse(result);
    if (!parsed.success) {
      throw new WireError(
        "transport_error",
        `${context}: the server's result is malformed (${formatZodIssues(parsed.error)})`,
      );
    }
    return parsed.data;
  };

  return {
    async list(
      request: z.output<typeof OwnerPromptsListRequestSchema>,
      ctx: HandlerContext,
    ): Promise<z.output<typeof OwnerListResultSchema>> {
      const mcp = readyConnection(connector);
      // A server without prompts has none to list (asking it would only earn "method not found").
      if (mcp.capabilities.prompts === undefined) return { items: [] };
      let page: { items: unknown[]; nextCursor?: string };
      try {
        page = request.all
          ? { items: await mcp.listPrompts(toolTimeoutMs) }
          : await mcp.listPage("prompts/list", request.cursor, toolTimeoutMs);
      } catch (error) {
        throw failure(`prompts/list failed for \`${server}\``, error);
      }
      // A malformed prompt would make the whole reply break the contract: it is left out and logged.
      const items: unknown[] = [];
      const rejected: unknown[] = [];
      for (const item of page.items) (PromptSchema.safeParse(item).success ? items : rejected).push(item);
      if (rejected.length > 0) {
        ctx.logger.warn(
          { server, rejected: rejected.slice(0, 20), count: rejected.length },
          "the server listed malformed prompts; they are left out",
        );
      }
      return {
        items: items as Array<Record<string, unknown>>,
        ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
      };
    },

    async get(request: z.output<typeof OwnerPromptsGetRequestSchema>): Promise<PromptsGetResult> {
      const mcp = readyConnection(connector);
      const context = `prompts/get failed for \`${server}\` (${request.name})`;
      let result: unknown;
      try {
        result = await mcp.getPrompt(
          {
            name: request.name,
            ...(request.arguments ? { arguments: request.arguments } : {}),
            ...(request.inputResponses ? { inputResponses: request.inputResponses } : {}),
            ...(request.requestState !== undefined ? { requestState: request.requestState } : {}),
          },
          toolTimeoutMs,
        );
      } catch (error) {
        throw failure(context, error);
      }
      return checked(PromptsGetResultSchema, result, context);
    },

    async complete(request: z.output<typeof OwnerCompleteRequestSchema>): Promise<CompleteResult> {
      const mcp = readyConnection(connector);
      if (mcp.capabilities.completions === undefined) return NO_COMPLETION;
      const what = request.ref.type === "ref/prompt" ? request.ref.name : request.ref.uri;
      const context = `completion/complete failed for \`${server}\` (${what}, argument ${request.argument.name})`;
      let result: unknown;
      try {
        result = await mcp.complete(
          {
            ref: request.ref,
            argument: request.argument,
            ...(request.context ? { context: request.context } : {}),
          },
          toolTimeoutMs,
        );
      } catch (error) {
        throw failure(context, error);
      }
      return checked(CompleteResultSchema, result, context);
    },
  };
}

interface PublicDeps {
  bus: Bus;
  prefix: string;
  store: CatalogEntries;
  /** Bounds waiting for an owner replica to answer. */
  timeoutMs: number;
}

export function publicPromptHandlers(deps: PublicDeps) {
  const listed = (server: string, items: ReadonlyArray<Record<string, unknown>>) =>
    items.map((item) => ({ server, ...item }) as ServerPrompt);

  return {
    async list(request: PromptsListRequest, ctx: HandlerContext): Promise<PromptsListResult> {
      if (request.cursor !== undefined && request.server === undefined) {
        throw new WireError("bad_request", "cursor can only be used when a server is specified");
      }
      if (request.server !== undefined) {
        const entry = await knownServer(deps.store, request.server);
        if (entry.promptsSupported === false) return { prompts: [] };
        const page = await deps.bus.request(
          internalSubjects(deps.prefix).connectorOwner(request.server).promptsList,
          request.cursor !== undefined ? { cursor: request.cursor } : {},
          OwnerListResultSchema,
          { timeoutMs: deps.timeoutMs },
        );
        return {
          prompts: listed(request.server, page.items),
          ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
        };
      }
      const entries = (await deps.store.readAll()).filter((e) => e.status === "ready" && e.promptsSupported);
      const perServer = await Promise.all(
        entries.map(async (entry) => {
          try {
            const all = await deps.bus.request(
              internalSubjects(deps.prefix).connectorOwner(entry.server).promptsList,
              { all: true },
              OwnerListResultSchema,
              { timeoutMs: deps.timeoutMs },
            );
            return listed(entry.server, all.items);
          } catch (error) {
            ctx.logger.warn(
              { server: entry.server, err: error },
              "prompts/list failed; the server is left out",
            );
            return [];
          }
        }),
      );
      return { prompts: perServer.flat() };
    },

    async get(request: PromptsGetRequest): Promise<PromptsGetResult> {
      const entry = await knownServer(deps.store, request.server);
      if (entry.promptsSupported === false) {
        throw new WireError(
          "bad_request",
          `MCP server '${request.server}' has no prompts (it did not declare the prompts capability); catalog.prompts.list shows every server's prompts`,
        );
      }
      const { server: _server, ...ask } = request;
      return deps.bus.request(
        internalSubjects(deps.prefix).connectorOwner(request.server).promptsGet,
        ask,
        PromptsGetResultSchema,
        {
          timeoutMs: deps.timeoutMs,
        },
      );
    },

    /** Forwarded only to a server that declared `completions`; any other has nothing to offer. */
    async complete(request: CompletionCompleteRequest): Promise<CompleteResult> {
      const entry = await knownServer(deps.store, request.server);
      if (entry.completionsSupported !== true) return NO_COMPLETION;
      const { server: _server, ...ask } = request;
      return deps.bus.request(
        internalSubjects(deps.prefix).connectorOwner(request.server).complete,
        ask,
        CompleteResultSchema,
        {
          timeoutMs: deps.timeoutMs,
        },
      );
    },
  };
}
