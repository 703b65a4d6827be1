import { describe, expect, it } from "vitest";
import {
  requiredServersFailure,
  startupFailureDisplay,
  startupFailureReason,
  startupTimeoutError,
} from "../../src/core/startup-messages.js";

const base = { server: "docs", startupTimeoutMs: 30_000 };

// Display strings of checklist 7, 8 and 9.
describe("startup failure display", () => {
  it.each([
    {
      name: "[7] a start-up timeout names the configured seconds and the key to adjust",
      facts: { ...base, error: startupTimeoutError(30_000) },
      display:
        "MCP client for `docs` timed out after 30 seconds. Add or adjust `startup_timeout_sec` in your config.toml:\n[mcp_servers.docs]\nstartup_timeout_sec = XX",
    },
    {
      name: "a handshake timeout reads as a timeout too",
      facts: { ...base, error: "timed out handshaking with MCP server", startupTimeoutMs: 5_000 },
      display:
        "MCP client for `docs` timed out after 5 seconds. Add or adjust `startup_timeout_sec` in your config.toml:\n[mcp_servers.docs]\nstartup_timeout_sec = XX",
    },
    {
      name: "[7] any other failure shows the error chain",
      facts: { ...base, error: "spawn nope ENOENT" },
      display: "MCP client for `docs` failed to start: spawn nope ENOENT",
    },
    {
      name: "[8] a local server that needs auth says it is not logged in",
      facts: { ...base, error: "Auth required", local: true },
      display: "The docs MCP server is not logged in. Run `codex mcp login docs`.",
    },
    {
      name: "[8] a remote server with stored OAuth needs reauthentication",
      facts: { ...base, error: "401", authRequired: true, hasStoredOAuth: true },
      display:
        "The docs MCP server requires OAuth reauthentication. Use your client's MCP OAuth sign-in flow.",
    },
    {
      name: "[9] the GitHub Copilot URL without a token gets the PAT guidance",
      facts: { ...base, server: "github", error: "Auth required", url: "https://api.githubcopilot.com/mcp/" },
      display:
        "GitHub MCP does not support OAuth. Log in by adding a personal access token (https://github.com/settings/personal-access-tokens) to your environment and config.toml:\n[mcp_servers.github]\nbearer_token_env_var = CODEX_GITHUB_PERSONAL_ACCESS_TOKEN",
    },
  ])("$name", ({ facts, display }) => {
    expect(startupFailureDisplay(facts)).toBe(display);
  });

  it("[8] marks reauthentication_required only when auth is required and OAuth is stored", () => {
    expect(startupFailureReason({ ...base, error: "Auth required", hasStoredOAuth: true })).toBe(
      "reauthentication_required",
    );
    expect(startupFailureReason({ ...base, error: "Auth required" })).toBeUndefined();
    expect(startupFailureReason({ ...base, error: "boom", hasStoredOAuth: true })).toBeUndefined();
  });

  it("formats the raw timeout error as the reference's duration", () => {
    expect([startupTimeoutError(30_000), startupTimeoutError(1_500), startupTimeoutError(250)]).toEqual([
      "MCP client startup timed out after 30s",
      "MCP client startup timed out after 1.5s",
      "MCP client startup timed out after 250ms",
    ]);
  });
});

describe("required servers", () => {
  it("[10] joins every failure in sorted order with the reference's wording", () => {
    const outcomes = new Map([
      ["zeta", { state: "failed" as const, error: "boom" }],
      ["alpha", { state: "cancelled" as const }],
      ["beta", { state: "ready" as const }],
      ["gamma", { state: "missing" as const }],
    ]);
    expect(requiredServersFailure(outcomes)).toBe(
      "required MCP servers failed to initialize: alpha: MCP startup cancelled; gamma: required MCP server `gamma` was not initialized; zeta: boom",
    );
  });

  it("reports nothing when every required server is ready", () => {
    expect(requiredServersFailure(new Map([["a", { state: "ready" as const }]]))).toBeUndefined();
  });
});
