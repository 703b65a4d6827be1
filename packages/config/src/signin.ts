/**
 * `[gateway.signin]`: browser sign-in for the console and the approvals inbox, with the identity
 * provider of `[gateway.oauth]` (OpenID Connect authorization code flow with PKCE). The gateway
 * is a client of that issuer here: `client_id`, and a secret when the client is confidential.
 * The session it gives the browser is a cookie sealed with a key from `session_secret_env`
 * (shared by every replica), or a key of the process when that is not set. The rules that use
 * this are in @toolbus/http-guard; here is only what the file may say.
 */
import { z } from "zod";
import type { Env } from "./http-headers.js";
import { isLoopbackHost } from "./loopback.js";
import { fileVariableOf, type SecretFileReader, secretFromEnv } from "./secret-env.js";
import { readSecretFile } from "./secret-file.js";

export interface SignInConfig {
  /** The gateway's client at the issuer (registered with the redirect URI `<origin>/auth/callback`). */
  clientId: string;
  /** The variable (or `<name>_FILE`) holding the client's secret; absent: a public client (PKCE alone). */
  clientSecretEnv?: string;
  /** Scopes asked for besides `openid`; absent: `[gateway.oauth] scopes_supported`. */
  scopes?: string[];
  /** How long a sign-in lasts, from the moment it was made (not extended by use). */
  sessionTtlMs: number;
  /**
   * The variable (or `<name>_FILE`) holding the secret session cookies are sealed with; absent: a
   * key of this process (sessions end when it stops and hold on no other replica).
   */
  sessionSecretEnv?: string;
}

/** Eight hours: a working day, after which the browser signs in again. */
export const DEFAULT_SIGNIN_SESSION_TTL_SEC = 8 * 3600;
/** A week at most: a sign-in cannot be taken back at the identity provider, so it must end. */
export const MAX_SIGNIN_SESSION_TTL_SEC = 7 * 24 * 3600;
/** A session secret shorter than this is too easy to guess. */
export const MIN_SESSION_SECRET_CHARS = 32;

const NonEmpty = z.string().min(1, { error: "must not be empty" });

export const SignInTable = z
  .strictObject({
    client_id: NonEmpty,
    client_secret_env: NonEmpty.optional(),
    scopes: z.array(NonEmpty).optional(),
    session_ttl_sec: z
      .int({ error: `must be a whole number of seconds from 60 to ${MAX_SIGNIN_SESSION_TTL_SEC}` })
      .min(60, { error: `must be a whole number of seconds from 60 to ${MAX_SIGNIN_SESSION_TTL_SEC}` })
      .max(MAX_SIGNIN_SESSION_TTL_SEC, {
        error: `must be at most ${MAX_SIGNIN_SESSION_TTL_SEC} (a week): a sign-in cannot be taken back at the identity provider, so it must end`,
      })
      .default(DEFAULT_SIGNIN_SESSION_TTL_SEC),
    session_secret_env: NonEmpty.optional(),
  })
  .transform(
    (t): SignInConfig => ({
      clientId: t.client_id,
      ...(t.client_secret_env === undefined ? {} : { clientSecretEnv: t.client_secret_env }),
      ...(t.scopes === undefined ? {} : { scopes: t.scopes }),
      sessionTtlMs: t.session_ttl_sec * 1000,
      ...(t.session_secret_env === undefined ? {} : { sessionSecretEnv: t.session_secret_env }),
    }),
  );

/**
 * Why browser sign-in cannot run with these `[gateway]` settings, or undefined when it can. The
 * session cookie must travel over https only (`Secure`, `__Host-`), so it needs an https
 * `public_url`; plain http is allowed only when every host browsers may use is loopback (a
 * developer's machine), where the cookie goes without `Secure`.
 */
export function signInTransportProblem(gateway: {
  publicUrl?: string | undefined;
  allowedHosts: readonly string[];
}): string | undefined {
  const fix =
    "set [gateway] public_url to the https URL browsers reach the gateway at (a TLS proxy in front), or keep allowed_hosts to loopback names for development";
  if (gateway.publicUrl !== undefined) {
    const url = new URL(gateway.publicUrl);
    if (url.protocol === "https:" || isLoopbackHost(url.hostname)) return undefined;
    return `browser sign-in sends its session cookie over https only, and public_url ${gateway.publicUrl} is plain http on a host that is not loopback; ${fix}`;
  }
  const remote = gateway.allowedHosts.filter((host) => !isLoopbackHost(host));
  if (remote.length === 0) return undefined;
  return `browser sign-in sends its session cookie over https only, and without public_url browsers reach the gateway over plain http at ${remote.join(", ")} (allowed_hosts); ${fix}`;
}

export type SignInSecrets =
  | { ok: true; clientSecret?: string; sessionSecret?: string }
  | { ok: false; message: string };

/** The client's secret and the session secret from their variables (or `_FILE`s), when configured. */
export function resolveSignInSecrets(
  signin: SignInConfig,
  env: Env,
  read: SecretFileReader = readSecretFile,
): SignInSecrets {
  const secrets: { clientSecret?: string; sessionSecret?: string } = {};
  if (signin.clientSecretEnv !== undefined) {
    const variable = signin.clientSecretEnv;
    const where = "(gateway.signin.client_secret_env)";
    const secret = secretFromEnv(env, variable, read);
    if (secret.state === "invalid") return { ok: false, message: `${secret.message} ${where}` };
    if (secret.state === "unset" || secret.value === "") {
      return {
        ok: false,
        message: `Environment variable ${variable} ${where} is not set; set it (or ${fileVariableOf(variable)} to a file holding it) to the secret of the client ${signin.clientId}, or remove client_secret_env if the client is public`,
      };
    }
    secrets.clientSecret = secret.value;
  }
  if (signin.sessionSecretEnv !== undefined) {
    const variable = signin.sessionSecretEnv;
    const where = "(gateway.signin.session_secret_env)";
    const secret = secretFromEnv(env, variable, read);
    if (secret.state === "invalid") return { ok: false, message: `${secret.message} ${where}` };
    if (secret.state === "unset" || secret.value.length < MIN_SESSION_SECRET_CHARS) {
      return {
        ok: false,
        message: `Environment variable ${variable} ${where} ${secret.state === "unset" ? "is not set" : `holds ${secret.value.length} characters`}; set it (or ${fileVariableOf(variable)}) to a random secret of at least ${MIN_SESSION_SECRET_CHARS} characters (e.g. openssl rand -base64 32), the same on every replica`,
      };
    }
    secrets.sessionSecret = secret.value;
  }
  return { ok: true, ...secrets };
}
