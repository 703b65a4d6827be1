/** The normalized MCP server config every service reads, whichever file format it came from. */
import type { ApprovalMode } from "@toolbus/policy";
import { SERVER_NAME_PATTERN } from "@toolbus/protocol";

export const OMIT_TOOLS_FROM = ["code_mode", "deferred", "direct"] as const;
export type OmitToolsFrom = (typeof OMIT_TOOLS_FROM)[number];

export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000;
export const DEFAULT_ENVIRONMENT_ID = "local";

/** A variable the stdio child receives from the parent's environment (`local`), or from a remote executor's (`remote`). */
export interface EnvVarSpec {
  name: string;
  source: "local" | "remote";
}

export interface McpToolConfig {
  approvalMode?: ApprovalMode;
  /**
   * OAuth scopes a caller's access token must hold to call the tool; a call without them is
   * refused with 403 and the step-up challenge naming them.
   */
  scopes?: string[];
}

export interface McpServerCommon {
  /** The configured name (`[mcp_servers.<name>]`), matching SERVER_NAME_PATTERN (@toolbus/protocol). */
  name: string;
  /** false → never started; its status is `disabled`. */
  enabled: boolean;
  /** true → start-up fails when this server does not come up. */
  required: boolean;
  /** Spawn/connect + initialize + first tools/list. */
  startupTimeoutMs: number;
  /** Per tools/call (and resources/* request). */
  toolTimeoutMs: number;
  /** Raw tool names; absent = every tool. Applied before `disabledTools`. */
  enabledTools?: string[];
  /** Raw tool names; absent = none. */
  disabledTools?: string[];
  defaultToolsApprovalMode: ApprovalMode;
  /** Per raw tool name. */
  tools: Record<string, McpToolConfig>;
  supportsParallelToolCalls: boolean;
  environmentId: string;
  omitToolsFrom: OmitToolsFrom[];
}

export interface StdioCommand {
  command: string;
  args: string[];
}

export interface StdioServerConfig extends McpServerCommon {
  transport: "stdio";
  command: string;
  args: string[];
  /** Applied last, over the inherited variables. */
  env: Record<string, string>;
  envVars: EnvVarSpec[];
  /** Working directory of the child; absent = a directory of the server's own (see stdio-launch.ts). */
  cwd?: string;
  /** toolbus extension: the user the child runs as (a name, or `uid:gid`); absent = `[catalog] run_as`. */
  runAs?: string;
  /** toolbus extension: a wrapper command the child is started through; absent = `[catalog] sandbox`, [] = none. */
  sandbox?: string[];
  /**
   * toolbus extension (`isolation`): one instance of the server per principal or per session, so
   * a server's state and its requests during a call belong to one caller; absent = one shared.
   */
  isolation?: StdioIsolation;
}

export interface StdioIsolation {
  /** Whose calls share an instance: a principal's, or a session's (its thread). */
  by: "principal" | "session";
  /** The most instances running at once (`max_instances`); an idle one makes room for a new key. */
  maxInstances: number;
  /** An instance with no call for this long is stopped (`instance_idle_timeout_sec`). */
  idleTimeoutMs: number;
}

export const DEFAULT_MAX_INSTANCES = 8;
export const MAX_INSTANCES_LIMIT = 256;
export const DEFAULT_INSTANCE_IDLE_SEC = 300;
export const ISOLATION_HINT = 'must be "shared", "per_principal" or "per_session"';

export interface StreamableHttpServerConfig extends McpServerCommon {
  transport: "streamable_http";
  url: string;
  /** toolbus extension (`transport = "sse"`, or `type: "sse"` in .mcp.json): use the legacy HTTP+SSE transport. */
  legacySse: boolean;
  /** Read at connect time: `Authorization: Bearer <value>`. */
  bearerTokenEnvVar?: string;
  httpHeaders: Record<string, string>;
  /** Header name → name of the env var holding its value; read at connect time. */
  envHttpHeaders: Record<string, string>;
  auth: "oauth" | "chatgpt";
}

export type McpServerConfig = StdioServerConfig | StreamableHttpServerConfig;
export type McpTransport = McpServerConfig["transport"];

/** `run_as`: a user name as `useradd` accepts it, or numeric `uid:gid`. */
export const RUN_AS_PATTERN = /^(?:[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?|\d{1,10}:\d{1,10})$/;
export const RUN_AS_HINT = 'must be a user name (e.g. "nobody") or numeric "<uid>:<gid>"';
export const SANDBOX_HINT =
  'must list a wrapper command and its arguments, the server\'s command following them, e.g. ["bwrap", "--unshare-all", …, "--"]';

/** The reference's start-up check, with its exact message; undefined when the name is fine. */
export function serverNameProblem(name: string): string | undefined {
  return SERVER_NAME_PATTERN.test(name)
    ? undefined
    : `Invalid MCP server name '${name}': must match pattern ${SERVER_NAME_PATTERN.source}`;
}

/** The defaults shared by both formats, for a server that sets nothing else. */
export function commonDefaults(name: string): McpServerCommon {
  return {
    name,
    enabled: true,
    required: false,
    startupTimeoutMs: DEFAULT_STARTUP_TIMEOUT_MS,
    toolTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS,
    defaultToolsApprovalMode: "auto",
    tools: {},
    supportsParallelToolCalls: false,
    environmentId: DEFAULT_ENVIRONMENT_ID,
    omitToolsFrom: [],
  };
}

/** Float seconds → whole milliseconds, never 0 for a positive input. */
export function secondsToMs(seconds: number): number {
  return Math.max(1, Math.round(seconds * 1000));
}
