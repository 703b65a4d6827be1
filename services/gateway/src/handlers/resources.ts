/**
 * `resources/list`, `resources/templates/list`, `resources/read` and (un)subscribe over the
 * catalog's resource subjects. MCP clients name a resource by URI alone; a read goes to the one
 * server that lists the URI or has a template matching it, and is refused otherwise
 * (core/resource-routing.ts). The directory of who lists what is reused for `directoryTtlMs`;
 * a read it cannot route lists afresh once (at most once a second) before it is refused.
 */
import { setImmediate } from "node:timers/promises";
import { type ServerResource, type ServerResourceTemplate, WireError } from "@toolbus/protocol";
import { JsonRpcCode } from "../core/jsonrpc-errors.js";
import {
  type DroppedTemplates,
  RESOURCE_ROUTING_LIMITS,
  type ResourceDirectory,
  type ResourceRoutingLimits,
  resourceDirectory,
  routableTemplates,
  routeResource,
  uriTooLong,
} from "../core/resource-routing.js";
import { RequestFailure, type ResourcesPort, type SessionStatePort } from "../ports.js";

/**
 * The code of every refused read: MCP's "resource not found" is Invalid Params since SEP-2164
 * (the TypeScript SDK's servers already answer it; -32002 was the earlier recommendation).
 */
export const RESOURCE_REFUSED = JsonRpcCode.invalidParams;

/** Template matching holds the event loop at most this long before other work gets a turn. */
const MATCHING_SLICE_MS = 5;

/** A read the directory cannot route lists again only if the directory is older than this. */
const RELIST_AFTER_MS = 1_000;

type Listed<T> = Omit<T, "server">;

export function resourceHandlers(deps: {
  resources: ResourcesPort;
  /** How long the URI → server directory is reused before a read lists again. */
  directoryTtlMs: number;
  now(): number;
  /** Told, once per server and reason, that a server's templates are left out of routing. */
  warn(dropped: DroppedTemplates): void;
  limits?: ResourceRoutingLimits;
}) {
  const limits = deps.limits ?? RESOURCE_ROUTING_LIMITS;
  const warned = new Set<string>();
  let directory: { at: number; value: ResourceDirectory } | undefined;
  let listing: Promise<ResourceDirectory> | undefined;

  const warnOnce = (dropped: DroppedTemplates) => {
    const key = `${dropped.reason}\u0000${dropped.server}`;
    if (warned.has(key)) return;
    warned.add(key);
    deps.warn(dropped);
  };

  /** Lists every server's resources and templates; concurrent callers share one listing. */
  const relist = (): Promise<ResourceDirectory> => {
    listing ??= (async () => {
      try {
        const [resources, templates] = await Promise.all([
          deps.resources.list(),
          deps.resources.templates(),
        ]).catch(unavailable("find the resource's server"));
        const value = resourceDirectory({ resources, templates }, limits, directory?.value);
        for (const dropped of value.dropped) warnOnce(dropped);
        directory = { at: deps.now(), value };
        return value;
      } finally {
        listing = undefined;
      }
    })();
    return listing;
  };

  const age = () => (directory ? deps.now() - directory.at : Number.POSITIVE_INFINITY);
  const route = (uri: string, value: ResourceDirectory) =>
    routeResource(uri, value, timeSlicedPause(MATCHING_SLICE_MS));

  return {
    async list(): Promise<{ resources: Listed<ServerResource>[] }> {
      const resources = await deps.resources.list().catch(unavailable("list resources"));
      return { resources: resources.map(withoutServer) };
    },

    /** The templates reads can be routed by: those over the caps are not listed either. */
    async templates(): Promise<{ resourceTemplates: Listed<ServerResourceTemplate>[] }> {
      const templates = await deps.resources.templates().catch(unavailable("list resource templates"));
      const { kept, dropped } = routableTemplates(templates, limits);
      for (const each of dropped) warnOnce(each);
      return { resourceTemplates: kept.map(withoutServer) };
    },

    async read(uri: string) {
      const tooLong = uriTooLong(uri, limits);
      if (tooLong) throw new RequestFailure(RESOURCE_REFUSED, tooLong.message);
      let routed = await route(
        uri,
        directory && age() < deps.directoryTtlMs ? directory.value : await relist(),
      );
      // A server may have listed the URI since the directory was built: list once more, unless
      // that was a moment ago (so a stream of unknown URIs does not list every server each time).
      if (routed.kind === "refused" && age() >= RELIST_AFTER_MS) routed = await route(uri, await relist());
      if (routed.kind === "refused") throw new RequestFailure(RESOURCE_REFUSED, routed.message);
      try {
        const result = await deps.resources.read(routed.server, uri);
        return { contents: result.contents };
      } catch (error) {
        if (!(error instanceof WireError)) throw error;
        throw new RequestFailure(
          RESOURCE_REFUSED,
          `Resource ${uri} could not be read from MCP server '${routed.server}': ${error.message}`,
        );
      }
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

/**
 * A pause that yields to the event loop once `sliceMs` have passed since the last yield:
 * matching a hostile server's templates never holds up `/healthz` or, in the all-in-one, the
 * other services for longer than one slice plus one template.
 */
function timeSlicedPause(sliceMs: number): () => Promise<void> {
  let sliceStart = performance.now();
  return async () => {
    if (performance.now() - sliceStart < sliceMs) return;
    await setImmediate();
    sliceStart = performance.now();
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
