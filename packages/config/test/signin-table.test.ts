import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { resolveSignInSecrets } from "../src/signin.js";
import { parseToolbusToml } from "../src/toolbus-toml.js";
import { problemsOf } from "./problems-of.js";

const path = "/etc/toolbus/toolbus.toml";
const parse = (toml: string) => parseToolbusToml(toml, { path });
const problems = (toml: string) => problemsOf(() => parse(toml));
const OAUTH = '[gateway.oauth]\nissuer = "https://idp.example.com"\n';

describe("[gateway.signin]", () => {
  it("is off unless the table is there", () => {
    expect(parse(OAUTH).gateway.signin).toBeUndefined();
  });

  it("takes a client id alone on a loopback gateway, with an eight-hour session", () => {
    expect(parse(`${OAUTH}[gateway.signin]\nclient_id = "toolbus-console"`).gateway.signin).toEqual({
      clientId: "toolbus-console",
      sessionTtlMs: 8 * 3600 * 1000,
    });
  });

  it("reads every key", () => {
    const { gateway } = parse(`
[gateway]
public_url = "https://toolbus.example.com"
allowed_hosts = ["toolbus.example.com"]
${OAUTH}
[gateway.signin]
client_id = "toolbus-console"
client_secret_env = "TOOLBUS_SIGNIN_CLIENT_SECRET"
scopes = ["profile", "groups"]
session_ttl_sec = 3600
session_secret_env = "TOOLBUS_SESSION_SECRET"
`);
    expect(gateway.signin).toEqual({
      clientId: "toolbus-console",
      clientSecretEnv: "TOOLBUS_SIGNIN_CLIENT_SECRET",
      scopes: ["profile", "groups"],
      sessionTtlMs: 3_600_000,
      sessionSecretEnv: "TOOLBUS_SESSION_SECRET",
    });
  });

  it.each([
    [
      '[gateway.signin]\nclient_id = "toolbus-console"',
      "gateway.signin",
      "browser sign-in needs [gateway.oauth]: its issuer is where browsers sign in, and its rules make the principal; add [gateway.oauth] with issuer",
    ],
    [
      `[gateway]\nallowed_hosts = ["toolbus.internal"]\n${OAUTH}[gateway.signin]\nclient_id = "c"`,
      "gateway.signin",
      "browser sign-in sends its session cookie over https only, and without public_url browsers reach the gateway over plain http at toolbus.internal (allowed_hosts); set [gateway] public_url to the https URL browsers reach the gateway at (a TLS proxy in front), or keep allowed_hosts to loopback names for development",
    ],
    [
      `[gateway]\npublic_url = "http://toolbus.example.com"\n${OAUTH}[gateway.signin]\nclient_id = "c"`,
      "gateway.signin",
      "browser sign-in sends its session cookie over https only, and public_url http://toolbus.example.com is plain http on a host that is not loopback; set [gateway] public_url to the https URL browsers reach the gateway at (a TLS proxy in front), or keep allowed_hosts to loopback names for development",
    ],
    [
      `${OAUTH}[gateway.signin]\nclient_id = "c"\nsession_ttl_sec = 2592000`,
      "gateway.signin.session_ttl_sec",
      "must be at most 604800 (a week): a sign-in cannot be taken back at the identity provider, so it must end",
    ],
    [`${OAUTH}[gateway.signin]\nclient_secret_env = "X"`, "gateway.signin.client_id", expect.any(String)],
  ])("refuses %j", (toml, at, message) => {
    expect(problems(toml)).toContainEqual({ at, message });
  });

  it("refuses a host check turned off without public_url: any Host could be the one the cookie is for", () => {
    expect(
      problems(
        `[gateway]\nallowed_hosts = ["*"]\n${OAUTH}audience = "api://toolbus"\n[gateway.signin]\nclient_id = "c"`,
      ).map((problem) => problem.at),
    ).toEqual(["gateway.signin"]);
  });

  it("takes an http public_url on loopback (development)", () => {
    const { gateway } = parse(
      `[gateway]\npublic_url = "http://localhost:8080"\nallowed_hosts = ["localhost"]\n${OAUTH}[gateway.signin]\nclient_id = "c"`,
    );
    expect(gateway.signin?.clientId).toBe("c");
  });
});

describe("the sign-in secrets", () => {
  const signin = {
    clientId: "toolbus-console",
    clientSecretEnv: "SIGNIN_SECRET",
    sessionSecretEnv: "SESSION_SECRET",
    sessionTtlMs: 1000,
  };
  const longSecret = "s".repeat(32);

  it("are read from the variables, or from the files their _FILE variants name", () => {
    const dir = mkdtempSync(join(tmpdir(), "signin-secret-"));
    writeFileSync(join(dir, "client"), "from-the-file\n");
    expect(
      resolveSignInSecrets(signin, { SIGNIN_SECRET_FILE: join(dir, "client"), SESSION_SECRET: longSecret }),
    ).toEqual({ ok: true, clientSecret: "from-the-file", sessionSecret: longSecret });
  });

  it("are optional when not configured: a public client, a key of the process", () => {
    expect(resolveSignInSecrets({ clientId: "c", sessionTtlMs: 1000 }, {})).toEqual({ ok: true });
  });

  it("are clear errors when missing or too short, never quoting a value", () => {
    expect(resolveSignInSecrets(signin, { SESSION_SECRET: longSecret })).toEqual({
      ok: false,
      message:
        "Environment variable SIGNIN_SECRET (gateway.signin.client_secret_env) is not set; set it (or SIGNIN_SECRET_FILE to a file holding it) to the secret of the client toolbus-console, or remove client_secret_env if the client is public",
    });
    const short = resolveSignInSecrets(signin, { SIGNIN_SECRET: "x", SESSION_SECRET: "too-short-secret" });
    expect(short).toEqual({
      ok: false,
      message:
        "Environment variable SESSION_SECRET (gateway.signin.session_secret_env) holds 16 characters; set it (or SESSION_SECRET_FILE) to a random secret of at least 32 characters (e.g. openssl rand -base64 32), the same on every replica",
    });
    expect(JSON.stringify(short)).not.toContain("too-short-secret");
  });
});
