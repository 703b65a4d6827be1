/**
 * Views (`[views.<name>]`, served at `/mcp/<name>`): a part of the catalog for the principals of
 * some groups. The listed set is the callable set: a view's catalog state holds only its tools
 * (and its name table resolves only them, so a call of another tool is refused exactly as an
 * unknown one), and its resources and prompts come only from its servers. The resource tools
 * read any server's resources, so a view that leaves a server out does not offer them.
 */
import type { ViewConfig } from "@toolbus/config";
import type { ExposedNameTable, Principal, ToolEntry } from "@toolbus/protocol";
import picomatch from "picomatch";
import type { CatalogState, GatewayPorts } from "../ports.js";
import { GATEWAY_INTRO } from "./gateway-instructions.js";

/** Where the default view is served; a view of its own is at `viewPath(name)`. */
export const MCP_PATH = "/mcp";

/** `/mcp/<name>`: a view's endpoint, and its OAuth resource path. */
export function viewPath(name: string): string {
  return `${MCP_PATH}/${name}`;
}

export interface GatewayView {
  readonly name: string;
  /** `/mcp/<name>`. */
  readonly path: string;
  /** Every server is in the view (only its tools may be fewer). */
  readonly everyServer: boolean;
  servesServer(server: string): boolean;
  servesTool(entry: Pick<ToolEntry, "server" | "rawName">): boolean;
  /** Whether `principal` may use the view: a member of one of its groups, an admin, or anyone when it names none. */
  admits(principal: Principal): boolean;
  /** The view's part of a catalog state (the same object for the same state). */
  catalog(state: CatalogState): CatalogState;
}

const anyOf = (globs: readonly string[]) => {
  const matchers = globs.map((glob) => picomatch(glob, { dot: true }));
  return (name: string) => matchers.some((matches) => matches(name));
};

export function compileView(config: ViewConfig): GatewayView {
  const servesServer = anyOf(config.servers);
  const servesRawTool = anyOf(config.tools);
  const everyServer = config.servers.includes("*");
  const groups = new Set(config.groups);
  const servesTool = (entry: Pick<ToolEntry, "server" | "rawName">) =>
    servesServer(entry.server) && servesRawTool(entry.rawName);
  const states = new WeakMap<CatalogState, CatalogState>();
  return {
    name: config.name,
    path: viewPath(config.name),
    everyServer,
    servesServer,
    servesTool,
    admits(principal) {
      if (groups.size === 0 || principal.role === "admin") return true;
      return (principal.groups ?? []).some((group) => groups.has(group));
    },
    catalog(state) {
      let viewed = states.get(state);
      if (viewed === undefined) {
        viewed = viewOfState(state, servesTool, everyServer);
        states.set(state, viewed);
      }
      return viewed;
    },
  };
}

function viewOfState(
  state: CatalogState,
  servesTool: (entry: ToolEntry) => boolean,
  everyServer: boolean,
): CatalogState {
  const tools = state.table.tools.filter(({ entry }) => servesTool(entry));
  const table: ExposedNameTable = {
    tools,
    resolve(exposedName) {
      const entry = state.table.resolve(exposedName);
      return entry !== undefined && servesTool(entry) ? entry : undefined;
    },
  };
  const exposed = new Set(tools.map((tool) => tool.exposedName));
  const resourceTools = everyServer ? state.resourceTools : [];
  const offered = new Set<string>([...exposed, ...resourceTools]);
  return {
    revision: state.revision,
    table,
    resourceTools,
    tools: state.tools.filter((tool) => offered.has(tool.name)),
    // Every server's own instructions would tell of servers the view leaves out.
    instructions: everyServer ? state.instructions : GATEWAY_INTRO,
  };
}

/** The scopes of `required` the principal's token does not hold (a token of another kind holds none). */
export function missingScopes(required: readonly string[], principal: Principal): string[] {
  const held = new Set(principal.scopes ?? []);
  return required.filter((scope) => !held.has(scope));
}

/**
 * The gateway's ports as a session of `view` uses them: its catalog part, and resources,
 * templates and prompts of its servers only (reads and completions route among those alone).
 */
export function viewPorts(ports: GatewayPorts, view: GatewayView): GatewayPorts {
  const { catalog, resources, prompts } = ports;
  const ofView = <T extends { server: string }>(items: T[]) =>
    items.filter((item) => view.servesServer(item.server));
  return {
    ...ports,
    catalog: { current: async () => view.catalog(await catalog.current()) },
    resources: {
      list: async () => ofView(await resources.list()),
      templates: async () => ofView(await resources.templates()),
      read: (server, uri) => resources.read(server, uri),
    },
    prompts: {
      list: async () => ofView(await prompts.list()),
      get: (server, name, args, answers) => prompts.get(server, name, args, answers),
      complete: (request) => prompts.complete(request),
    },
  };
}

/** `[mcp_servers.<s>.tools.<t>] scopes`, by server, then raw tool name. */
export type ToolScopes = Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;

/** The scopes a call of the tool requires (none unless configured). */
export function requiredScopes(
  scopes: ToolScopes | undefined,
  entry: Pick<ToolEntry, "server" | "rawName">,
): readonly string[] {
  return scopes?.[entry.server]?.[entry.rawName] ?? [];
}

/** The scopes each configured tool requires, from the servers' tool tables. */
export function toolScopesOf(
  servers: Readonly<Record<string, { tools: Readonly<Record<string, { scopes?: readonly string[] }>> }>>,
): ToolScopes {
  const scopes: Record<string, Record<string, readonly string[]>> = {};
  for (const [server, { tools }] of Object.entries(servers)) {
    for (const [tool, config] of Object.entries(tools)) {
      if (config.scopes === undefined || config.scopes.length === 0) continue;
      scopes[server] = { ...scopes[server], [tool]: config.scopes };
    }
  }
  return scopes;
}
