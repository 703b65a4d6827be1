/**
 * `resources/list`, `resources/templates/list`, `resources/read` and (un)subscribe over the
 * catalog's resource subjects. MCP clients name a resource by URI alone, so a read goes to the
 * server that listed the URI, else one with a matching template, else each ready server in turn.
 */
import { type ServerResource, type ServerResourceTemplate, WireError } from "@toolbus/protocol";
import { JsonRpcCode } from "../core/jsonrpc-errors.js";
import { type KnownResources, resourceServers } from "../core/resource-routing.js";
import { RequestFailure, type ResourcesPort, type SessionStatePort } from "../ports.js";

/** MCP's "resource not found" error code. */
export const RESOURCE_NOT_FOUND = -32002;

type Listed<T> = Omit<T, "server">;

export function resourceHandlers(deps: {
  resources: ResourcesPort;
  /** Ready servers, the last candidates for a URI no listing names. */
  readyServers(): Promise<readonly string[]>;
  /** How long the URI → server directory is reused before a read lists again. */
  directoryTtlMs: number;
  now(): number;
}) {
  let directory: { known: KnownResources; at: number } | undefined;

  const knownResources = async (fresh: boolean): Promise<KnownResources> => {
    if (!fresh && directory && deps.now() - directory.at < deps.directoryTtlMs) return directory.known;
    const [resources, templates] = await Promise.all([deps.resources.list(), deps.resources.templates()]);
    directory = { known: { resources, templates }, at: deps.now() };
    return directory.known;
  };

  return {
    async list(): Promise<{ resources: Listed<ServerResource>[] }> {
      const resources = await deps.resources.list().catch(unavailable("list resources"));
      const templates = directory?.known.templates ?? [];
      directory = { known: { resources, templates }, at: deps.now() };
      return { resources: resources.map(withoutServer) };
    },

    async templates(): Promise<{ resourceTemplates: Listed<ServerResourceTemplate>[] }> {
      const templates = await deps.resources.templates().catch(unavailable("list resource templates"));
      return { resourceTemplates: templates.map(withoutServer) };
    },

    async read(uri: string) {
      const failures: string[] = [];
      const tried = new Set<string>();
      for (const fresh of [false, true]) {
        const known = await knownResources(fresh).catch(unavailable("find the resource's server"));
        const ready = await deps.readyServers().catch(() => []);
        for (const server of resourceServers(uri, known, ready)) {
          if (tried.has(server)) continue;
          tried.add(server);
          try {
            const result = await deps.resources.read(server, uri);
            return { contents: result.contents };
          } catch (error) {
            if (!(error instanceof WireError)) throw error;
            failures.push(`${server}: ${error.message}`);
          }
        }
      }
      const why =
        failures.length > 0 ? ` (${failures.join("; ")})` : " (no server lists it or has a template for it)";
      throw new RequestFailure(RESOURCE_NOT_FOUND, `Resource not found: ${uri}${why}`);
    },

    subscribe(uri: string, session: Pick<SessionStatePort, "subscribe">): Record<string, never> {
      session.subscribe(uri);
      return {};
    },

    unsubscribe(uri: string, session: Pick<SessionStatePort, "unsubscribe">): Record<string, never> {
      session.unsubscribe(uri);
      return {};
    },
  };
}

function withoutServer<T extends { server: string }>({ server: _server, ...rest }: T): Omit<T, "server"> {
  return rest;
}

function unavailable(what: string) {
  return (error: unknown): never => {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RequestFailure(JsonRpcCode.internalError, `toolbus could not ${what}: ${reason}`);
  };
}
