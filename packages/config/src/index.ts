/** @toolbus/config: the toolbus.toml schema (and .mcp.json), its loader, and the pure rules that read it. */

/** The approval modes a config accepts, with their aliases and what each does (for help texts). */
export { APPROVAL_MODE_ALIASES, APPROVAL_MODE_MEANINGS, APPROVAL_MODES } from "@toolbus/policy";
export { DEMO_SERVER_NAME, demoConfig } from "./demo.js";
export {
  bareTokenName,
  GATEWAY_ROLES,
  type GatewayPrincipal,
  GatewayRole,
  PRINCIPAL_NAME_PATTERN,
  resolveGatewayTokens,
  type TokensResolution,
} from "./gateway-tokens.js";
export { type Env, type HeadersResolution, resolveHttpHeaders } from "./http-headers.js";
export { type LoadToolbusConfigOptions, loadToolbusConfig } from "./load.js";
export { acceptsConnections, freePort } from "./local-ports.js";
export {
  applyEnvOverrides,
  type ConfigLocation,
  configFormat,
  DEFAULT_CONFIG_FILE,
  type LocateOptions,
  locateConfig,
} from "./locate.js";
export { isLoopbackHost } from "./loopback.js";
export { parseMcpJson } from "./mcp-json.js";
export {
  DEFAULT_ENVIRONMENT_ID,
  DEFAULT_STARTUP_TIMEOUT_MS,
  DEFAULT_TOOL_TIMEOUT_MS,
  type EnvVarSpec,
  type McpServerCommon,
  type McpServerConfig,
  type McpToolConfig,
  type McpTransport,
  OMIT_TOOLS_FROM,
  type OmitToolsFrom,
  RUN_AS_PATTERN,
  type StdioCommand,
  type StdioIsolation,
  type StdioServerConfig,
  type StreamableHttpServerConfig,
  serverNameProblem,
} from "./mcp-server.js";
export {
  ASYMMETRIC_JWS_ALGORITHMS,
  type ClientSecretResolution,
  type IntrospectionConfig,
  type JwsAlgorithm,
  type OAuthConfig,
  resolveIntrospectionSecret,
} from "./oauth.js";
export { ConfigFileError, type ConfigProblem, formatProblems } from "./problems.js";
export { DEFAULT_SESSION_IDLE_TTL_MS, type ProvisionInputs, provisionInputs } from "./provision-settings.js";
export {
  fileVariableOf,
  type SecretFileReader,
  type SecretValue,
  secretFromEnv,
} from "./secret-env.js";
export { MAX_SECRET_FILE_BYTES, readSecretFile, type SecretFileRead } from "./secret-file.js";
export {
  DEFAULT_SIGNIN_SESSION_TTL_SEC,
  MAX_SIGNIN_SESSION_TTL_SEC,
  MIN_SESSION_SECRET_CHARS,
  resolveSignInSecrets,
  type SignInConfig,
  type SignInSecrets,
  signInTransportProblem,
} from "./signin.js";
export {
  type ChildEnvResolution,
  type ChildIdentity,
  INHERITED_ENV_VARS,
  stdioChildEnv,
} from "./stdio-env.js";
export {
  type ApprovalsConfig,
  type BusConfig,
  type CatalogConfig,
  DEFAULT_ALLOWED_HOSTS,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  DEFAULT_APPROVALS_PORT,
  DEFAULT_BUS_CONFIG,
  DEFAULT_EDGE_LIMITS,
  DEFAULT_GATEWAY_PORT,
  DEFAULT_MAX_CONCURRENT_HOOKS,
  DEFAULT_MEMORY_CONFIG,
  type GatewayConfig,
  type MemoryConfig,
  namingOptionsOf,
  type StreamLimits,
} from "./tables.js";
export type { ConfigSource, ToolbusConfig } from "./toolbus-config.js";
export { type ParseOptions, parseToolbusToml } from "./toolbus-toml.js";
export { VIEW_NAME_PATTERN, type ViewConfig } from "./views.js";
