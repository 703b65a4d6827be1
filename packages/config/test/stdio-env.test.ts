import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INHERITED_ENV_VARS, stdioChildEnv } from "../src/stdio-env.js";

const parentEnv = {
  HOME: "/home/dev",
  PATH: "/usr/bin:/bin",
  LANG: "C.UTF-8",
  TZ: "UTC",
  USER: "dev",
  AWS_SECRET_ACCESS_KEY: "leak-me-not",
  API_KEY: "k-123",
  REGION: "eu",
  REMOTE_ONLY: "local-value",
  NODE_OPTIONS: "--inspect",
};

function childEnv(...args: Parameters<typeof stdioChildEnv>): Record<string, string> {
  const resolution = stdioChildEnv(...args);
  if (!resolution.ok) throw new Error(resolution.message);
  return resolution.env;
}

describe("[12] the stdio child's environment", () => {
  it("passes only the allow-list, the local env_vars and env, with env winning", () => {
    const env = childEnv(
      {
        envVars: [
          { name: "API_KEY", source: "local" },
          { name: "REMOTE_ONLY", source: "remote" },
          { name: "UNSET", source: "local" },
        ],
        env: { TZ: "Europe/Paris", LOG: "debug" },
      },
      parentEnv,
    );
    expect(env).toEqual({
      HOME: "/home/dev",
      PATH: "/usr/bin:/bin",
      LANG: "C.UTF-8",
      TZ: "Europe/Paris",
      USER: "dev",
      API_KEY: "k-123",
      LOG: "debug",
    });
  });

  it("gives a server with no env settings just the inherited variables that are set", () => {
    expect(childEnv({ envVars: [], env: {} }, parentEnv)).toEqual({
      HOME: "/home/dev",
      PATH: "/usr/bin:/bin",
      LANG: "C.UTF-8",
      TZ: "UTC",
      USER: "dev",
    });
  });

  it("keeps a variable that is set but empty", () => {
    expect(childEnv({ envVars: [{ name: "EMPTY", source: "local" }], env: {} }, { EMPTY: "" })).toEqual({
      EMPTY: "",
    });
  });

  it("never lets a variable through that nothing asked for", () => {
    const name = fc.stringMatching(/^[A-Z_]{1,12}$/);
    fc.assert(
      fc.property(
        fc.dictionary(name, fc.string()),
        fc.array(fc.record({ name, source: fc.constantFrom("local" as const, "remote" as const) })),
        fc.dictionary(name, fc.string()),
        (parent, envVars, env) => {
          const allowed = new Set<string>([
            ...INHERITED_ENV_VARS,
            ...envVars.filter((v) => v.source === "local").map((v) => v.name),
            ...Object.keys(env),
          ]);
          // `_FILE` variables are paths toolbus would read: the property is about names only.
          const parentWithoutFiles = Object.fromEntries(
            Object.entries(parent).filter(([key]) => !key.endsWith("_FILE")),
          );
          const child = childEnv({ envVars, env }, parentWithoutFiles);
          for (const key of Object.keys(child)) expect(allowed.has(key)).toBe(true);
          for (const [key, value] of Object.entries(env)) expect(child[key]).toBe(value);
        },
      ),
    );
  });

  it("never passes toolbus's own secrets or their files' paths, even with the whole environment set", () => {
    const toolbusEnv = {
      ...parentEnv,
      DATABASE_URL: "postgres://u:pw@db/toolbus",
      DATABASE_URL_FILE: "/run/secrets/db",
      TOOLBUS_TOKENS: "alice:admin:secret",
      NATS_NKEY_FILE: "/run/secrets/catalog.nk",
      NATS_PASSWORD: "nats-pw",
      NATS_URL: "nats://u:pw@nats:4222",
      OTEL_EXPORTER_OTLP_HEADERS: "api-key=otel",
    };
    const env = childEnv({ envVars: [], env: {} }, toolbusEnv);
    for (const value of Object.values(env)) {
      expect(["pw", "secret", "/run/secrets", "otel"].some((part) => value.includes(part))).toBe(false);
    }
  });
});

describe("a passed-through variable given as <NAME>_FILE", () => {
  const dir = mkdtempSync(join(tmpdir(), "toolbus-stdio-env-"));
  const file = join(dir, "api-key");
  writeFileSync(file, "k-from-file\n", { mode: 0o600 });
  const server = { envVars: [{ name: "API_KEY", source: "local" as const }], env: {} };

  it("reaches the child as NAME, with the file's content (its final newline dropped)", () => {
    expect(childEnv(server, { API_KEY_FILE: file })).toEqual({ API_KEY: "k-from-file" });
  });

  it("fails the server, naming the variable and the file, when the file cannot be read", () => {
    expect(stdioChildEnv(server, { API_KEY_FILE: join(dir, "missing") })).toEqual({
      ok: false,
      message: `env_vars: API_KEY_FILE=${join(dir, "missing")}: cannot read it (no such file); point it at a file holding API_KEY's value`,
    });
  });

  it("fails the server when both NAME and NAME_FILE are set", () => {
    const resolution = stdioChildEnv(server, { API_KEY: "k", API_KEY_FILE: file });
    expect(resolution).toEqual({
      ok: false,
      message:
        "env_vars: API_KEY and API_KEY_FILE are both set; keep one (API_KEY_FILE, the file, keeps the secret out of the environment)",
    });
  });

  it("does not pass the file's path to the child", () => {
    expect(Object.keys(childEnv(server, { API_KEY_FILE: file }))).toEqual(["API_KEY"]);
  });
});

describe("a server run as another user", () => {
  it("gets that user's name and its own directory as HOME instead of toolbus's", () => {
    const env = childEnv({ envVars: [], env: {} }, parentEnv, {
      identity: { home: "/var/lib/toolbus/servers/s", user: "nobody" },
    });
    expect(env).toMatchObject({ HOME: "/var/lib/toolbus/servers/s", USER: "nobody", LOGNAME: "nobody" });
  });

  it("has no USER or LOGNAME when it was given as uid:gid", () => {
    const env = childEnv(
      { envVars: [], env: {} },
      { ...parentEnv, LOGNAME: "dev" },
      {
        identity: { home: "/srv/s" },
      },
    );
    expect(env.USER).toBeUndefined();
    expect(env.LOGNAME).toBeUndefined();
    expect(env.HOME).toBe("/srv/s");
  });

  it("still lets the server's own env say otherwise", () => {
    const env = childEnv({ envVars: [], env: { HOME: "/srv/home" } }, parentEnv, {
      identity: { home: "/srv/s", user: "nobody" },
    });
    expect(env.HOME).toBe("/srv/home");
  });
});
