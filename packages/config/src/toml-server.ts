/** One `[mcp_servers.<name>]` table of toolbus.toml (Codex's keys) → a McpServerConfig, or every problem in it. */
import { ApprovalModeSchema } from "@toolbus/policy";
import { z } from "zod";
import {
  commonDefaults,
  DEFAULT_INSTANCE_IDLE_SEC,
  DEFAULT_MAX_INSTANCES,
  DEFAULT_STARTUP_TIMEOUT_MS,
  DEFAULT_TOOL_TIMEOUT_MS,
  type EnvVarSpec,
  ISOLATION_HINT,
  MAX_INSTANCES_LIMIT,
  type McpServerCommon,
  type McpServerConfig,
  type McpToolConfig,
  type McpTransport,
  OMIT_TOOLS_FROM,
  RUN_AS_HINT,
  RUN_AS_PATTERN,
  SANDBOX_HINT,
  secondsToMs,
} from "./mcp-server.js";
import {
  type ConfigProblem,
  configErrorMap,
  describeValue,
  issuesToProblems,
  type PathSegment,
  problem,
} from "./problems.js";

export type ServerParse = { ok: true; server: McpServerConfig } | { ok: false; problems: ConfigProblem[] };

const NonEmpty = z.string().min(1, { error: "must not be empty" });
const StringList = z.array(z.string());
const StringMap = z.record(z.string(), z.string());
const Seconds = z.number().gt(0, { error: "must be a positive number of seconds" });

/** `run_as` and `sandbox`, per server and as `[catalog]` defaults. */
export const RunAs = z.string().regex(RUN_AS_PATTERN, { error: RUN_AS_HINT });
export const Sandbox = z.array(NonEmpty, { error: SANDBOX_HINT });

const HttpUrl = z.string().refine(isHttpUrl, { error: "must be an http:// or https:// URL" });

export function isHttpUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const { protocol } = new URL(value);
  return protocol === "http:" || protocol === "https:";
}

const EnvVarEntry = z.union([NonEmpty, z.strictObject({ name: NonEmpty, source: z.string().optional() })], {
  error: 'expected a variable name or a table { name = "...", source = "local" | "remote" }',
});

/** Every key a server table may hold. Keys that only exist to be rejected are `unknown` here. */
const RawServerSchema = z.strictObject({
  // stdio
  command: NonEmpty.optional(),
  args: StringList.optional(),
  env: StringMap.optional(),
  env_vars: z.array(EnvVarEntry).optional(),
  cwd: NonEmpty.optional(),
  run_as: RunAs.optional(),
  sandbox: Sandbox.optional(),
  isolation: z.enum(["shared", "per_principal", "per_session"], { error: ISOLATION_HINT }).optional(),
  max_instances: z.int().min(1).max(MAX_INSTANCES_LIMIT).optional(),
  instance_idle_timeout_sec: Seconds.optional(),
  // streamable HTTP
  url: HttpUrl.optional(),
  bearer_token_env_var: NonEmpty.optional(),
  http_headers: StringMap.optional(),
  env_http_headers: StringMap.optional(),
  auth: z.enum(["oauth", "chatgpt"]).optional(),
  transport: z.enum(["streamable_http", "sse"]).optional(),
  bearer_token: z.unknown().optional(),
  http_headers_helper: z.unknown().optional(),
  oauth: z.unknown().optional(),
  oauth_resource: z.unknown().optional(),
  scopes: z.unknown().optional(),
  // both
  enabled: z.boolean().optional(),
  required: z.boolean().optional(),
  startup_timeout_sec: Seconds.optional(),
  startup_timeout_ms: z.int().gt(0, { error: "must be a positive number of milliseconds" }).optional(),
  tool_timeout_sec: Seconds.optional(),
  enabled_tools: StringList.optional(),
  disabled_tools: StringList.optional(),
  default_tools_approval_mode: ApprovalModeSchema.optional(),
  tools: z
    .record(
      z.string(),
      z.strictObject({
        approval_mode: ApprovalModeSchema.optional(),
        scopes: z
          .array(
            z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, {
              error: "must be an OAuth scope (printable ASCII, no space, quote or backslash)",
            }),
          )
          .optional(),
      }),
    )
    .optional(),
  supports_parallel_tool_calls: z.boolean().optional(),
  environment_id: z
    .string()
    .refine((id) => id === "local", {
      error: 'toolbus runs every MCP server locally: remove environment_id or set it to "local"',
    })
    .optional(),
  omit_tools_from: z.array(z.enum(OMIT_TOOLS_FROM)).optional(),
  /** Codex's legacy display-name key: accepted and ignored. */
  name: z.string().optional(),
});
type RawServer = z.output<typeof RawServerSchema>;

/**
 * The reference's lists, in its order; `transport`, `scopes`, `run_as`, `sandbox` and the
 * isolation keys are toolbus's additions.
 */
const REJECTED_BY: Record<McpTransport, readonly string[]> = {
  stdio: [
    "url",
    "bearer_token_env_var",
    "bearer_token",
    "http_headers_helper",
    "http_headers",
    "env_http_headers",
    "oauth",
    "oauth_resource",
    "auth",
    "transport",
  ],
  streamable_http: [
    "args",
    "env",
    "env_vars",
    "cwd",
    "bearer_token",
    "run_as",
    "sandbox",
    "isolation",
    "max_instances",
    "instance_idle_timeout_sec",
  ],
};

const OAUTH_LOGIN =
  "is not supported by toolbus (it has no OAuth login); use bearer_token_env_var or env_http_headers";
/** Codex keys toolbus has no machinery for: an error rather than a silent no-op. */
const NOT_IN_TOOLBUS: Record<string, string> = {
  http_headers_helper:
    "http_headers_helper is not supported by toolbus; use http_headers or env_http_headers",
  oauth: `oauth ${OAUTH_LOGIN}`,
  oauth_resource: `oauth_resource ${OAUTH_LOGIN}`,
  scopes: `scopes ${OAUTH_LOGIN}`,
};

export function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function has(table: Record<string, unknown>, key: string): boolean {
  return Object.hasOwn(table, key) && table[key] !== undefined;
}

/** Transport by key presence (`command` → stdio, else `url` → streamable_http), and the keys it forbids. */
function transportRules(
  table: Record<string, unknown>,
  at: readonly PathSegment[],
): { transport: McpTransport | undefined; problems: ConfigProblem[]; rejected: Set<string> } {
  const transport = has(table, "command") ? "stdio" : has(table, "url") ? "streamable_http" : undefined;
  if (transport === undefined) {
    return { transport, problems: [problem(at, "invalid transport")], rejected: new Set() };
  }
  const problems: ConfigProblem[] = [];
  const rejected = new Set<string>();
  for (const field of REJECTED_BY[transport]) {
    if (!has(table, field)) continue;
    problems.push(problem(at, `${field} is not supported for ${transport}`));
    rejected.add(field);
  }
  for (const [field, message] of Object.entries(NOT_IN_TOOLBUS)) {
    if (!has(table, field) || rejected.has(field)) continue;
    problems.push(problem(at, message));
    rejected.add(field);
  }
  return { transport, problems, rejected };
}

/** `env_vars` entries with a source other than local/remote, in the reference's words. */
function envVarSourceProblems(table: Record<string, unknown>, at: readonly PathSegment[]): ConfigProblem[] {
  const entries = table.env_vars;
  if (!Array.isArray(entries)) return [];
  return entries.flatMap((entry, index) => {
    const source = isTable(entry) ? entry.source : undefined;
    if (typeof source !== "string" || source === "local" || source === "remote") return [];
    return [
      problem(
        [...at, "env_vars", index],
        `unsupported env_vars source \`${source}\`; expected \`local\` or \`remote\``,
      ),
    ];
  });
}

/** Parses `[mcp_servers.<name>]`; `at` is where the table sits, for problem paths. */
export function parseTomlServer(name: string, value: unknown, at: readonly PathSegment[]): ServerParse {
  const problems: ConfigProblem[] = [];
  // A bad name is not the config's problem: the catalog fails that server alone at start-up (§2.1).
  if (!isTable(value)) {
    problems.push(problem(at, `expected a table, got ${describeValue(value, "a table")}`));
    return { ok: false, problems };
  }
  const rules = transportRules(value, at);
  problems.push(...rules.problems);
  if (rules.transport !== "streamable_http") problems.push(...envVarSourceProblems(value, at));

  const parsed = RawServerSchema.safeParse(value, { error: configErrorMap("a table") });
  if (!parsed.success) {
    // A key that must go anyway needs no second complaint about its value.
    const relevant = parsed.error.issues.filter((issue) => !rules.rejected.has(String(issue.path[0])));
    problems.push(...issuesToProblems(relevant, at));
  }
  if (problems.length > 0 || !parsed.success || rules.transport === undefined) return { ok: false, problems };
  return { ok: true, server: normalize(name, rules.transport, parsed.data) };
}

function normalize(name: string, transport: McpTransport, raw: RawServer): McpServerConfig {
  const common: McpServerCommon = {
    ...commonDefaults(name),
    enabled: raw.enabled ?? true,
    required: raw.required ?? false,
    // `_sec` wins over the legacy `_ms`.
    startupTimeoutMs:
      raw.startup_timeout_sec !== undefined
        ? secondsToMs(raw.startup_timeout_sec)
        : (raw.startup_timeout_ms ?? DEFAULT_STARTUP_TIMEOUT_MS),
    toolTimeoutMs:
      raw.tool_timeout_sec !== undefined ? secondsToMs(raw.tool_timeout_sec) : DEFAULT_TOOL_TIMEOUT_MS,
    ...(raw.enabled_tools === undefined ? {} : { enabledTools: [...raw.enabled_tools] }),
    ...(raw.disabled_tools === undefined ? {} : { disabledTools: [...raw.disabled_tools] }),
    defaultToolsApprovalMode: raw.default_tools_approval_mode ?? "auto",
    tools: Object.fromEntries(
      Object.entries(raw.tools ?? {}).map(([tool, c]): [string, McpToolConfig] => [
        tool,
        {
          ...(c.approval_mode === undefined ? {} : { approvalMode: c.approval_mode }),
          ...(c.scopes === undefined ? {} : { scopes: [...c.scopes] }),
        },
      ]),
    ),
    supportsParallelToolCalls: raw.supports_parallel_tool_calls ?? false,
    environmentId: raw.environment_id ?? "local",
    omitToolsFrom: [...(raw.omit_tools_from ?? [])],
  };
  if (transport === "stdio") {
    return {
      ...common,
      transport,
      command: raw.command!,
      args: [...(raw.args ?? [])],
      env: { ...raw.env },
      envVars: (raw.env_vars ?? []).map(toEnvVarSpec),
      ...(raw.cwd === undefined ? {} : { cwd: raw.cwd }),
      ...(raw.run_as === undefined ? {} : { runAs: raw.run_as }),
      ...(raw.sandbox === undefined ? {} : { sandbox: [...raw.sandbox] }),
      ...(raw.isolation === undefined || raw.isolation === "shared"
        ? {}
        : {
            isolation: {
              by: raw.isolation === "per_principal" ? "principal" : "session",
              maxInstances: raw.max_instances ?? DEFAULT_MAX_INSTANCES,
              idleTimeoutMs: secondsToMs(raw.instance_idle_timeout_sec ?? DEFAULT_INSTANCE_IDLE_SEC),
            },
          }),
    };
  }
  return {
    ...common,
    transport,
    url: raw.url!,
    legacySse: raw.transport === "sse",
    ...(raw.bearer_token_env_var === undefined ? {} : { bearerTokenEnvVar: raw.bearer_token_env_var }),
    httpHeaders: { ...raw.http_headers },
    envHttpHeaders: { ...raw.env_http_headers },
    auth: raw.auth ?? "oauth",
  };
}

function toEnvVarSpec(entry: string | { name: string; source?: string | undefined }): EnvVarSpec {
  if (typeof entry === "string") return { name: entry, source: "local" };
  // Sources other than local/remote were reported before normalizing.
  return { name: entry.name, source: entry.source === "remote" ? "remote" : "local" };
}
