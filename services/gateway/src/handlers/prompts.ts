/**
 * `prompts/list`, `prompts/get` and `completion/complete` over the catalog's prompt subjects.
 * Prompts get exposed names by the same rule as tools (a table from exposed name to server and
 * raw name, never parsed); the table is rebuilt by every `prompts/list`, and a `prompts/get` or
 * completion naming a prompt the table does not know lists again before it gives up.
 *
 * A 2026-07-28 server may ask questions before it gives a prompt (`input_required`): `ask`
 * passes them to a 2026-07-28 client (adapters/mcp/modern-edge.ts holds the server's
 * `requestState`); a 2025 client, which nothing can ask mid-`prompts/get`, is told why it gets
 * no prompt.
 */
import {
  asksFirst,
  type CompleteResult,
  type ExposedNames,
  exposeNames,
  type GetPromptResult,
  type NamingMode,
  type PromptsGetResult,
  type ServerPrompt,
  WireError,
} from "@toolbus/protocol";
import { JsonRpcCode } from "../core/jsonrpc-errors.js";
import { type PromptAnswers, type PromptsPort, RequestFailure, type ResourcesPort } from "../ports.js";

/** One upstream prompt under its raw name (what the naming rule reads). */
interface PromptItem {
  readonly server: string;
  readonly rawName: string;
  readonly prompt: ServerPrompt;
}

type ListedPrompt = Omit<ServerPrompt, "server">;

/** `completion/complete` params as MCP clients send them. */
export interface CompleteParams {
  ref: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> } | undefined;
}

export function promptHandlers(deps: {
  prompts: PromptsPort;
  resources: Pick<ResourcesPort, "templates">;
  naming: NamingMode;
  /** How long the exposed-name table is reused by gets and completions before they list again. */
  directoryTtlMs: number;
  now(): number;
}) {
  let directory: { table: ExposedNames<PromptItem>; at: number } | undefined;

  const listFresh = async (): Promise<ExposedNames<PromptItem>> => {
    const prompts = await deps.prompts.list().catch(unavailable("list prompts"));
    const items = prompts.map((prompt) => ({ server: prompt.server, rawName: prompt.name, prompt }));
    const table = exposeNames(items, deps.naming);
    directory = { table, at: deps.now() };
    return table;
  };

  /** The prompt behind an exposed name: from the table while it is fresh, else from a new listing. */
  const find = async (name: string): Promise<PromptItem> => {
    const cached =
      directory && deps.now() - directory.at < deps.directoryTtlMs
        ? directory.table.resolve(name)
        : undefined;
    const item = cached ?? (await listFresh()).resolve(name);
    if (!item) {
      throw new RequestFailure(
        JsonRpcCode.invalidParams,
        `Unknown prompt: ${name}. None of the servers toolbus serves lists a prompt by that name; call prompts/list for the current names`,
      );
    }
    return item;
  };

  /** The prompt, or its server's questions first (with `answers`: the caller's, sent again). */
  const ask = async (
    name: string,
    args: Record<string, string> | undefined,
    answers?: PromptAnswers,
  ): Promise<PromptsGetResult> => {
    const item = await find(name);
    try {
      return await deps.prompts.get(item.server, item.rawName, args, answers);
    } catch (error) {
      throw failure(error, `get prompt ${name}`);
    }
  };

  return {
    async list(): Promise<{ prompts: ListedPrompt[] }> {
      const table = await listFresh();
      return {
        prompts: table.items.map(({ exposedName, item }) => {
          const { server: _server, ...prompt } = item.prompt;
          return { ...prompt, name: exposedName };
        }),
      };
    },

    async get(name: string, args: Record<string, string> | undefined): Promise<GetPromptResult> {
      const result = await ask(name, args);
      if (asksFirst(result)) {
        throw new RequestFailure(
          JsonRpcCode.invalidRequest,
          `the server of prompt ${name} asks questions before it gives the prompt (MCP 2026-07-28 input_required), which toolbus can put only to an MCP 2026-07-28 client; get it from one`,
        );
      }
      return result as GetPromptResult;
    },

    ask,

    async complete(params: CompleteParams): Promise<CompleteResult> {
      const { server, ref } =
        params.ref.type === "ref/prompt"
          ? await promptRef(params.ref.name)
          : await templateRef(params.ref.uri);
      try {
        return await deps.prompts.complete({
          server,
          ref,
          argument: params.argument,
          ...(params.context ? { context: params.context } : {}),
        });
      } catch (error) {
        throw failure(error, `complete argument ${params.argument.name}`);
      }
    },

    /** A server said its prompts changed: the next get or completion lists again. */
    invalidate(): void {
      directory = undefined;
    },
  };

  async function promptRef(name: string) {
    const item = await find(name);
    return { server: item.server, ref: { type: "ref/prompt" as const, name: item.rawName } };
  }

  /** Template URIs are the servers' own (not renamed); the first server listing it answers. */
  async function templateRef(uri: string) {
    const templates = await deps.resources.templates().catch(unavailable("list resource templates"));
    const server = templates
      .filter((template) => template.uriTemplate === uri)
      .map((template) => template.server)
      .sort()[0];
    if (server === undefined) {
      throw new RequestFailure(
        JsonRpcCode.invalidParams,
        `Unknown resource template: ${uri}. No server toolbus serves lists it; call resources/templates/list for the current templates`,
      );
    }
    return { server, ref: { type: "ref/resource" as const, uri } };
  }
}

/** The catalog's answer as a JSON-RPC error: the server's refusal is the client's bad params. */
function failure(error: unknown, what: string): Error {
  if (!(error instanceof WireError)) return error as Error;
  if (error.code === "bad_request") return new RequestFailure(JsonRpcCode.invalidParams, error.message);
  return new RequestFailure(JsonRpcCode.internalError, `toolbus could not ${what}: ${error.message}`);
}

function unavailable(what: string) {
  return (error: unknown): never => {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RequestFailure(JsonRpcCode.internalError, `toolbus could not ${what}: ${reason}`);
  };
}
