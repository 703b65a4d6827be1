import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { INHERITED_ENV_VARS, stdioChildEnv } from "../src/stdio-env.js";

const parentEnv = {
  HOME: "/home/dev",
  PATH: "/usr/bin:/bin",
  LANG: "C.UTF-8",
  TZ: "UTC",
  AWS_SECRET_ACCESS_KEY: "leak-me-not",
  API_KEY: "k-123",
  REGION: "eu",
  REMOTE_ONLY: "local-value",
  NODE_OPTIONS: "--inspect",
};

describe("[12] the stdio child's environment", () => {
  it("passes only the allow-list, the local env_vars and env, with env winning", () => {
    const env = stdioChildEnv(
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
      API_KEY: "k-123",
      LOG: "debug",
    });
  });

  it("gives a server with no env settings just the inherited variables that are set", () => {
    expect(stdioChildEnv({ envVars: [], env: {} }, parentEnv)).toEqual({
      HOME: "/home/dev",
      PATH: "/usr/bin:/bin",
      LANG: "C.UTF-8",
      TZ: "UTC",
    });
  });

  it("keeps a variable that is set but empty", () => {
    expect(stdioChildEnv({ envVars: [{ name: "EMPTY", source: "local" }], env: {} }, { EMPTY: "" })).toEqual({
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
          const child = stdioChildEnv({ envVars, env }, parent);
          for (const key of Object.keys(child)) expect(allowed.has(key)).toBe(true);
          for (const [key, value] of Object.entries(env)) expect(child[key]).toBe(value);
        },
      ),
    );
  });
});
