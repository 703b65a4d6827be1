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
