import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveHttpHeaders } from "../src/http-headers.js";

const server = {
  name: "github",
  httpHeaders: { "X-Team": "tools", "X-Api-Key": "static" },
  envHttpHeaders: { "X-Api-Key": "GH_KEY", "X-Org": "GH_ORG" },
  bearerTokenEnvVar: "GH_TOKEN",
};

describe("[11] HTTP headers, resolved when the server connects", () => {
  it.each([
    [
      "every variable set",
      { GH_KEY: "k", GH_ORG: "acme", GH_TOKEN: "t0k" },
      {
        ok: true,
        headers: { "X-Team": "tools", "X-Api-Key": "k", "X-Org": "acme", Authorization: "Bearer t0k" },
      },
    ],
    [
      "header variables unset or blank (skipped, as in Codex)",
      { GH_ORG: "  ", GH_TOKEN: "t0k" },
      { ok: true, headers: { "X-Team": "tools", "X-Api-Key": "static", Authorization: "Bearer t0k" } },
    ],
    [
      "the bearer variable empty",
      { GH_TOKEN: "" },
      { ok: false, message: "Environment variable GH_TOKEN for MCP server 'github' is empty" },
    ],
    [
      "the bearer variable unset",
      {},
      { ok: false, message: "Environment variable GH_TOKEN for MCP server 'github' is not set" },
    ],
  ])("with %s", (_, env, expected) => {
    expect(resolveHttpHeaders(server, env)).toEqual(expected);
  });

  it("sends no Authorization header when no bearer variable is configured", () => {
    expect(resolveHttpHeaders({ name: "s", httpHeaders: {}, envHttpHeaders: {} }, { GH_TOKEN: "t" })).toEqual(
      {
        ok: true,
        headers: {},
      },
    );
  });
});

describe("HTTP header variables given as <VAR>_FILE", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolbus-headers-"));
  const tokenFile = join(dir, "gh-token");
  writeFileSync(tokenFile, "t0k-from-file\n", { mode: 0o600 });
  const keyFile = join(dir, "gh-key");
  writeFileSync(keyFile, "k-from-file\n", { mode: 0o600 });

  it("reads the bearer token and header values from the files, toolbus's environment holding only paths", () => {
    expect(resolveHttpHeaders(server, { GH_TOKEN_FILE: tokenFile, GH_KEY_FILE: keyFile })).toEqual({
      ok: true,
      headers: { "X-Team": "tools", "X-Api-Key": "k-from-file", Authorization: "Bearer t0k-from-file" },
    });
  });

  it("fails the server, naming the file, when a header's file cannot be read", () => {
    const missing = join(dir, "missing");
    expect(resolveHttpHeaders(server, { GH_TOKEN: "t", GH_ORG_FILE: missing })).toEqual({
      ok: false,
      message: `env_http_headers: GH_ORG_FILE=${missing}: cannot read it (no such file); point it at a file holding GH_ORG's value`,
    });
  });

  it("says the token file is empty rather than send an empty bearer token", () => {
    const empty = join(dir, "empty");
    writeFileSync(empty, "\n");
    expect(resolveHttpHeaders(server, { GH_TOKEN_FILE: empty })).toEqual({
      ok: false,
      message: `The file GH_TOKEN_FILE=${empty} for MCP server 'github' is empty`,
    });
  });

  it("refuses the token in both the variable and a file", () => {
    expect(resolveHttpHeaders(server, { GH_TOKEN: "t", GH_TOKEN_FILE: tokenFile })).toEqual({
      ok: false,
      message:
        "bearer_token_env_var: GH_TOKEN and GH_TOKEN_FILE are both set; keep one (GH_TOKEN_FILE, the file, keeps the secret out of the environment)",
    });
  });
});
