/**
 * The bearer tokens the HTTP edge accepts, read from the variable `[gateway] tokens_env` names
 * (or from the file its `<name>_FILE` variant names, see secret-env.ts), each with the principal it stands for: a name (what a decision records as who approved) and a
 * role. Entries are separated by commas or whitespace; each is `<name>:<role>:<token>` or a bare
 * `<token>`. A bare token is an `admin` named `token-<first 8 hex of its SHA-256>`: before roles,
 * any token could do everything, and a bare token keeps doing so.
 */
import { createHash } from "node:crypto";
import { PRINCIPAL_ROLES, PrincipalRole } from "@toolbus/protocol";
import type { Env } from "./http-headers.js";
import { fileVariableOf, type SecretFileReader, secretFromEnv } from "./secret-env.js";
import { readSecretFile } from "./secret-file.js";
import type { GatewayConfig } from "./tables.js";

/** What a token may do (the table is `ACCESS_BY_ROLE` in @toolbus/http-guard): a principal's roles. */
export const GatewayRole = PrincipalRole;
export type GatewayRole = PrincipalRole;
export const GATEWAY_ROLES = PRINCIPAL_ROLES;

export interface GatewayPrincipal {
  /** Recorded as who answered an approval; `^[A-Za-z0-9._@-]{1,64}$`. */
  name: string;
  role: GatewayRole;
  token: string;
}

export const PRINCIPAL_NAME_PATTERN = /^[A-Za-z0-9._@-]{1,64}$/;
/** What an approval's `by` says when no principal answered; no token may take these names. */
const RESERVED_NAMES: ReadonlySet<string> = new Set(["user", "timeout", "cancel", "anonymous"]);

export type TokensResolution = { ok: true; principals: GatewayPrincipal[] } | { ok: false; message: string };

/** No `tokens_env` → no principals (auth off). Every bad entry is reported, by position only. */
export function resolveGatewayTokens(
  gateway: Pick<GatewayConfig, "tokensEnv">,
  env: Env,
  read: SecretFileReader = readSecretFile,
): TokensResolution {
  const variable = gateway.tokensEnv;
  if (variable === undefined) return { ok: true, principals: [] };
  const secret = secretFromEnv(env, variable, read);
  if (secret.state === "invalid") return { ok: false, message: `${secret.message} (gateway.tokens_env)` };
  const value = secret.state === "set" ? secret.value : undefined;
  const source = secret.state === "set" ? secret.variable : variable;
  const entries = (value ?? "").split(/[\s,]+/).filter((entry) => entry !== "");
  if (entries.length === 0) {
    const what =
      secret.state !== "set"
        ? `Environment variable ${variable} (gateway.tokens_env) is not set`
        : secret.variable === variable
          ? `Environment variable ${variable} (gateway.tokens_env) holds no tokens`
          : `The file ${secret.source} (gateway.tokens_env) holds no tokens`;
    return {
      ok: false,
      message: `${what}; set it to the accepted bearer tokens (or ${fileVariableOf(variable)} to a file holding them), or remove tokens_env to turn auth off`,
    };
  }
  const principals: GatewayPrincipal[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [index, entry] of entries.entries()) {
    // Never quote the entry: it holds a secret.
    const where = `entry ${index + 1} of ${source} (gateway.tokens_env)`;
    const parsed = parseEntry(entry);
    if (typeof parsed === "string") {
      problems.push(`${where}: ${parsed}`);
      continue;
    }
    if (seen.has(parsed.token)) {
      problems.push(`${where}: the same token is listed twice; give each principal its own token`);
      continue;
    }
    seen.add(parsed.token);
    principals.push(parsed);
  }
  if (problems.length > 0) return { ok: false, message: problems.join("; ") };
  return { ok: true, principals };
}

function parseEntry(entry: string): GatewayPrincipal | string {
  const parts = entry.split(":");
  if (parts.length === 1) return { name: bareTokenName(entry), role: GatewayRole.admin, token: entry };
  if (parts.length === 2) {
    return `has one ":"; write <name>:<role>:<token> (role ${GATEWAY_ROLES.join(", ")}) or a bare token without ":"`;
  }
  const [name = "", role = "", ...rest] = parts;
  const token = rest.join(":");
  if (!PRINCIPAL_NAME_PATTERN.test(name)) {
    return 'the name before the first ":" must be 1 to 64 of A-Z a-z 0-9 . _ @ -';
  }
  if (RESERVED_NAMES.has(name)) {
    return `the name ${name} is reserved (an approval answered by ${[...RESERVED_NAMES].join(", ")} means no principal); choose another`;
  }
  if (!(GATEWAY_ROLES as readonly string[]).includes(role)) {
    return `the role of ${name} must be one of ${GATEWAY_ROLES.join(", ")}`;
  }
  if (token === "") return `${name} has no token after "${name}:${role}:"`;
  return { name, role: role as GatewayRole, token };
}

/** `token-<first 8 hex of SHA-256>`: stable across restarts, and it reveals nothing usable. */
export function bareTokenName(token: string): string {
  return `token-${createHash("sha256").update(token, "utf8").digest("hex").slice(0, 8)}`;
}
