/** The bearer tokens the gateway accepts, read from the variable `[gateway] tokens_env` names. */
import type { Env } from "./http-headers.js";
import type { GatewayConfig } from "./tables.js";

export type TokensResolution = { ok: true; tokens: string[] } | { ok: false; message: string };

/** No `tokens_env` → no tokens (auth off). Tokens are separated by commas or whitespace. */
export function resolveGatewayTokens(gateway: Pick<GatewayConfig, "tokensEnv">, env: Env): TokensResolution {
  const variable = gateway.tokensEnv;
  if (variable === undefined) return { ok: true, tokens: [] };
  const value = env[variable];
  const tokens = (value ?? "").split(/[\s,]+/).filter((token) => token !== "");
  if (tokens.length === 0) {
    const state = value === undefined ? "is not set" : "holds no tokens";
    return {
      ok: false,
      message: `Environment variable ${variable} (gateway.tokens_env) ${state}; set it to the accepted bearer tokens, or remove tokens_env to turn auth off`,
    };
  }
  return { ok: true, tokens };
}
