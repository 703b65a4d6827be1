/**
 * The `mcpServers` JSON of Claude Desktop, Claude Code and Cursor (`.mcp.json`) → the same McpServerConfig.
 * Secrets stay in the environment: `${VAR}` placeholders become env_vars / env_http_headers / bearer_token_env_var,
 * read when the server starts, never baked into the config.
 */

import { z } from "zod";
import { duplicateServerNames } from "./duplicate-servers.js";
import { commonDefaults, type EnvVarSpec, type McpServerConfig, type McpTransport } from "./mcp-server.js";
import {
  ConfigFileError,
  type ConfigProblem,
  configErrorMap,
  describeValue,
  issuesToProblems,
  type PathSegment,
  problem,
} from "./problems.js";
import { defaultTables } from "./tables.js";
import { isHttpUrl, isTable, type ServerParse } from "./toml-server.js";
import { sealConfig, type ToolbusConfig } from "./toolbus-config.js";
import type { ParseOptions } from "./toolbus-toml.js";

const NonEmpty = z.string().min(1, { error: "must not be empty" });
const StringMap = z.record(z.string(), z.string());

const RawJsonServerSchema = z.strictObject({
  type: z.enum(["stdio", "http", "streamable-http", "sse"]).optional(),
  command: NonEmpty.optional(),
  args: z.array(z.string()).optional(),
  env: StringMap.optional(),
  cwd: NonEmpty.optional(),
  url: z.string().refine(isHttpUrl, { error: "must be an http:// or https:// URL" }).optional(),
  headers: StringMap.optional(),
});
type RawJsonServer = z.output<typeof RawJsonServerSchema>;

const REJECTED_BY: Record<McpTransport, readonly string[]> = {
  stdio: ["url", "headers"],
  streamable_http: ["command", "args", "env", "cwd"],
};

const PLACEHOLDER = /\$\{/;
const WHOLE_PLACEHOLDER = /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;
const BEARER_PLACEHOLDER = /^Bearer \$\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** Throws ConfigFileError listing every problem; the other tables take their defaults. */
export function parseMcpJson(text: string, { path }: ParseOptions): ToolbusConfig {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new ConfigFileError(path, [{ at: "", message: `invalid JSON: ${(error as Error).message}` }]);
  }
  const rawServers = isTable(document) ? document.mcpServers : undefined;
  if (!isTable(rawServers)) {
    throw new ConfigFileError(path, [
      problem(
        ["mcpServers"],
        `expected an object of MCP servers, got ${describeValue(rawServers, "an object")}`,
      ),
    ]);
  }
  const problems: ConfigProblem[] = duplicateServerNames(text).map(({ name, lines }) =>
    problem(
      ["mcpServers", name],
      `is given ${lines.length} times (lines ${lines.join(", ")}); JSON keeps only the last, so give each server a name of its own`,
    ),
  );
  const servers: [string, McpServerConfig][] = [];
  for (const [name, entry] of Object.entries(rawServers)) {
    const parsed = parseJsonServer(name, entry, ["mcpServers", name]);
    if (parsed.ok) servers.push([name, parsed.server]);
    else problems.push(...parsed.problems);
  }
  if (problems.length > 0) throw new ConfigFileError(path, problems);
  return sealConfig({
    source: { kind: "file", path, format: "mcp_json" },
    mcpServers: Object.fromEntries(servers),
    ...defaultTables(),
  });
}

function parseJsonServer(name: string, value: unknown, at: readonly PathSegment[]): ServerParse {
  const problems: ConfigProblem[] = [];
  // A bad name is not the config's problem: the catalog fails that server alone at start-up (§2.1).
  if (!isTable(value)) {
    problems.push(problem(at, `expected an object, got ${describeValue(value, "an object")}`));
    return { ok: false, problems };
  }
  const transport = jsonTransport(value, at, problems);
  const rejected = new Set<string>();
  if (transport !== undefined) {
    for (const field of REJECTED_BY[transport]) {
      if (value[field] === undefined) continue;
      problems.push(problem(at, `${field} is not supported for ${transport}`));
      rejected.add(field);
    }
  }
  const parsed = RawJsonServerSchema.safeParse(value, { error: configErrorMap("an object") });
  if (!parsed.success) {
    const relevant = parsed.error.issues.filter((issue) => !rejected.has(String(issue.path[0])));
    problems.push(...issuesToProblems(relevant, at));
    return { ok: false, problems };
  }
  const raw = parsed.data;
  const common = commonDefaults(name);
  if (transport === "stdio") {
    const { env, envVars, problems: placeholderProblems } = stdioPlaceholders(raw, at);
    problems.push(...placeholderProblems);
    if (problems.length > 0) return { ok: false, problems };
    const server: McpServerConfig = {
      ...common,
      transport,
      command: raw.command!,
      args: [...(raw.args ?? [])],
      env,
      envVars,
      ...(raw.cwd === undefined ? {} : { cwd: raw.cwd }),
    };
    return { ok: true, server };
  }
  if (transport === undefined) return { ok: false, problems };
  const headers = httpPlaceholders(raw, at);
  problems.push(...headers.problems);
  if (problems.length > 0) return { ok: false, problems };
  const server: McpServerConfig = {
    ...common,
    transport,
    url: raw.url!,
    legacySse: raw.type === "sse",
    ...(headers.bearerTokenEnvVar === undefined ? {} : { bearerTokenEnvVar: headers.bearerTokenEnvVar }),
    httpHeaders: headers.httpHeaders,
    envHttpHeaders: headers.envHttpHeaders,
    auth: "oauth",
  };
  return { ok: true, server };
}

/** `type` when given, else key presence like toolbus.toml (`command` → stdio, else `url` → HTTP). */
function jsonTransport(
  value: Record<string, unknown>,
  at: readonly PathSegment[],
  problems: ConfigProblem[],
): McpTransport | undefined {
  const { type } = value;
  if (type === "stdio") {
    if (value.command === undefined) problems.push(problem(at, "type `stdio` needs a `command`"));
    return "stdio";
  }
  if (type === "http" || type === "streamable-http" || type === "sse") {
    if (value.url === undefined) problems.push(problem(at, `type \`${type}\` needs a \`url\``));
    return "streamable_http";
  }
  if (type !== undefined) return undefined; // the schema reports the bad type
  if (value.command !== undefined) return "stdio";
  if (value.url !== undefined) return "streamable_http";
  problems.push(problem(at, "invalid transport"));
  return undefined;
}

function unsupportedPlaceholder(at: readonly PathSegment[], hint: string): ConfigProblem {
  return problem(at, `\${...} expansion is not supported here; ${hint}`);
}

/** `"NAME": "${NAME}"` in env passes the parent's variable through (an env_vars entry); other placeholders are errors. */
function stdioPlaceholders(raw: RawJsonServer, at: readonly PathSegment[]) {
  const problems: ConfigProblem[] = [];
  const literal = "write the value itself";
  if (raw.command !== undefined && PLACEHOLDER.test(raw.command)) {
    problems.push(unsupportedPlaceholder([...at, "command"], literal));
  }
  (raw.args ?? []).forEach((arg, index) => {
    if (PLACEHOLDER.test(arg)) problems.push(unsupportedPlaceholder([...at, "args", index], literal));
  });
  if (raw.cwd !== undefined && PLACEHOLDER.test(raw.cwd)) {
    problems.push(unsupportedPlaceholder([...at, "cwd"], literal));
  }
  const env: Record<string, string> = {};
  const envVars: EnvVarSpec[] = [];
  for (const [key, value] of Object.entries(raw.env ?? {})) {
    if (!PLACEHOLDER.test(value)) env[key] = value;
    else if (WHOLE_PLACEHOLDER.exec(value)?.[1] === key) envVars.push({ name: key, source: "local" });
    else {
      problems.push(
        unsupportedPlaceholder(
          [...at, "env", key],
          `pass a variable through as "${key}": "\${${key}}" or write the value`,
        ),
      );
    }
  }
  return { problems, env, envVars };
}

/**
 * `"Header": "${VAR}"` → env_http_headers; `"Authorization": "Bearer ${VAR}"` → bearer_token_env_var;
 * other placeholders are errors.
 */
function httpPlaceholders(raw: RawJsonServer, at: readonly PathSegment[]) {
  const problems: ConfigProblem[] = [];
  if (raw.url !== undefined && PLACEHOLDER.test(raw.url)) {
    problems.push(unsupportedPlaceholder([...at, "url"], "write the URL itself"));
  }
  const httpHeaders: Record<string, string> = {};
  const envHttpHeaders: Record<string, string> = {};
  let bearerTokenEnvVar: string | undefined;
  for (const [header, value] of Object.entries(raw.headers ?? {})) {
    const whole = WHOLE_PLACEHOLDER.exec(value)?.[1];
    const bearer = header.toLowerCase() === "authorization" ? BEARER_PLACEHOLDER.exec(value)?.[1] : undefined;
    if (!PLACEHOLDER.test(value)) httpHeaders[header] = value;
    else if (whole !== undefined) envHttpHeaders[header] = whole;
    else if (bearer !== undefined) bearerTokenEnvVar = bearer;
    else {
      problems.push(
        unsupportedPlaceholder(
          [...at, "headers", header],
          `use "${header}": "\${VAR}" (or "Authorization": "Bearer \${VAR}") or write the value`,
        ),
      );
    }
  }
  return { problems, httpHeaders, envHttpHeaders, bearerTokenEnvVar };
}
