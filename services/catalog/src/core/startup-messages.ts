/**
 * What a person reads about a server's start-up: the display string of a failure
 * (docs/reference-behavior.md §2.3) and the required-servers summary (§2.5).
 */

export interface StartupFailureFacts {
  server: string;
  /** The raw error chain, as `startup_complete` reports it. */
  error: string;
  url?: string;
  hasBearerTokenEnvVar?: boolean;
  hasHeaders?: boolean;
  authRequired?: boolean;
  /** Stored OAuth credentials exist, so the fix is to log in again rather than for the first time. */
  hasStoredOAuth?: boolean;
  /** A stdio (local) server, or one reached over HTTP. */
  local?: boolean;
  startupTimeoutMs: number;
}

const GITHUB_COPILOT_URL = "https://api.githubcopilot.com/mcp/";
const TIMEOUT_MARKERS = [
  "request timed out",
  "timed out handshaking with MCP server",
  "MCP client startup timed out",
];

export function isAuthRequiredError(error: string, flagged = false): boolean {
  return flagged || error.includes("Auth required");
}

/** The display string of a failed start-up; the first rule that matches wins. */
export function startupFailureDisplay(facts: StartupFailureFacts): string {
  const { server, error } = facts;
  if (facts.url === GITHUB_COPILOT_URL && !facts.hasBearerTokenEnvVar && !facts.hasHeaders) {
    return (
      "GitHub MCP does not support OAuth. Log in by adding a personal access token " +
      "(https://github.com/settings/personal-access-tokens) to your environment and config.toml:\n" +
      `[mcp_servers.${server}]\nbearer_token_env_var = CODEX_GITHUB_PERSONAL_ACCESS_TOKEN`
    );
  }
  if (isAuthRequiredError(error, facts.authRequired)) {
    const state = facts.hasStoredOAuth ? "requires OAuth reauthentication" : "is not logged in";
    const hint = facts.local
      ? `Run \`codex mcp login ${server}\`.`
      : "Use your client's MCP OAuth sign-in flow.";
    return `The ${server} MCP server ${state}. ${hint}`;
  }
  if (TIMEOUT_MARKERS.some((marker) => error.includes(marker))) {
    const seconds = formatSeconds(facts.startupTimeoutMs);
    return (
      `MCP client for \`${server}\` timed out after ${seconds} seconds. ` +
      `Add or adjust \`startup_timeout_sec\` in your config.toml:\n[mcp_servers.${server}]\nstartup_timeout_sec = XX`
    );
  }
  return `MCP client for \`${server}\` failed to start: ${error}`;
}

/** `reauthentication_required` only when auth is required and OAuth state is stored. */
export function startupFailureReason(facts: StartupFailureFacts): "reauthentication_required" | undefined {
  return isAuthRequiredError(facts.error, facts.authRequired) && facts.hasStoredOAuth
    ? "reauthentication_required"
    : undefined;
}

export function startupTimeoutError(timeoutMs: number): string {
  return `MCP client startup timed out after ${formatDuration(timeoutMs)}`;
}

export type RequiredServerOutcome =
  | { state: "ready" }
  | { state: "failed"; error: string }
  | { state: "cancelled" }
  | { state: "missing" };

/**
 * `required MCP servers failed to initialize: a: <err>; b: <err>` over the required servers in
 * sorted order, or undefined when every one of them is ready.
 */
export function requiredServersFailure(
  outcomes: ReadonlyMap<string, RequiredServerOutcome>,
): string | undefined {
  const problems: string[] = [];
  for (const server of [...outcomes.keys()].sort()) {
    const outcome = outcomes.get(server)!;
    switch (outcome.state) {
      case "ready":
        break;
      case "failed":
        problems.push(`${server}: ${outcome.error}`);
        break;
      case "cancelled":
        problems.push(`${server}: MCP startup cancelled`);
        break;
      case "missing":
        problems.push(`${server}: required MCP server \`${server}\` was not initialized`);
        break;
    }
  }
  return problems.length === 0
    ? undefined
    : `required MCP servers failed to initialize: ${problems.join("; ")}`;
}

/** Whole seconds print without a fraction (`30`), others with up to three decimals (`1.5`). */
function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return Number.isInteger(seconds) ? String(seconds) : String(Number(seconds.toFixed(3)));
}

/** Rust's Duration Debug form, which the reference's messages use: `30s`, `1.5s`, `250ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  return `${formatSeconds(ms)}s`;
}
