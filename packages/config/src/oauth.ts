/**
 * `[gateway.oauth]`: the gateway as an OAuth 2.1 resource server (the MCP authorization spec).
 * Access tokens of one issuer are accepted beside the static tokens of `tokens_env`: JWTs checked
 * against the issuer's published keys, opaque tokens by RFC 7662 introspection when the gateway
 * has a client of its own for it. The rules that read this (claims, roles, challenges) are in
 * @toolbus/http-guard; here is only what the file may say.
 */
import { z } from "zod";
import type { Env } from "./http-headers.js";
import { isLoopbackHost } from "./loopback.js";
import { fileVariableOf, type SecretFileReader, secretFromEnv } from "./secret-env.js";
import { readSecretFile } from "./secret-file.js";

/**
 * The JWS algorithms an access token may be signed with: asymmetric ones only. Never `none`,
 * and never an HMAC (`HS*`): a resource server holds only the issuer's public keys, and an HMAC
 * "verified" with a public key is a signature anyone can make.
 */
export const ASYMMETRIC_JWS_ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;
export type JwsAlgorithm = (typeof ASYMMETRIC_JWS_ALGORITHMS)[number];

/** The gateway's own client at the issuer, to introspect opaque tokens (RFC 7662). */
export interface IntrospectionConfig {
  clientId: string;
  /** The variable (or `<name>_FILE`) holding the client's secret. */
  clientSecretEnv: string;
  /** Absent: the issuer's `introspection_endpoint` (discovery). */
  endpoint?: string;
}

export interface OAuthConfig {
  /** The issuer exactly as its tokens' `iss` claim writes it; its metadata is discovered from it. */
  issuer: string;
  /** Accepted `aud` values; absent: the canonical URI of each endpoint (RFC 8707). */
  audience?: string[];
  /** Advertised in the protected resource metadata and the 401 challenge. */
  scopesSupported: string[];
  /** The claim that names the principal. */
  principalClaim: string;
  /** The claim with a name to show. */
  nameClaim: string;
  /** The claim listing the principal's groups (a dotted path reaches into an object). */
  groupsClaim: string;
  /** Members of these groups, or holders of these scopes, are admins; the approver ones approvers; others callers. */
  adminGroups: string[];
  approverGroups: string[];
  adminScopes: string[];
  approverScopes: string[];
  algorithms: JwsAlgorithm[];
  introspection?: IntrospectionConfig;
}

const NonEmpty = z.string().min(1, { error: "must not be empty" });
const Names = z.array(NonEmpty).default(() => []);

/** https, or http on loopback (a development identity provider); no query or fragment. */
function issuerUrlProblem(value: string): string | undefined {
  const url = URL.parse(value);
  if (url === null) return "must be an absolute URL such as https://idp.example.com/realms/toolbus";
  if (url.search !== "" || url.hash !== "") return "must have no query or fragment";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && isLoopbackHost(url.hostname)) return undefined;
  return "must use https (http only on loopback, for a development identity provider)";
}

const IssuerUrl = NonEmpty.check((ctx) => {
  const problem = issuerUrlProblem(ctx.value);
  if (problem) ctx.issues.push({ code: "custom", input: ctx.value, message: problem });
});

const Algorithm = z.string().check((ctx) => {
  if ((ASYMMETRIC_JWS_ALGORITHMS as readonly string[]).includes(ctx.value)) return;
  const why =
    ctx.value.toLowerCase() === "none"
      ? "an unsigned token proves nothing"
      : /^HS\d+$/i.test(ctx.value)
        ? "an HMAC needs a shared secret, and one checked with the issuer's public key is a signature anyone can make"
        : "it is not an asymmetric JWS algorithm";
  ctx.issues.push({
    code: "custom",
    input: ctx.value,
    message: `${JSON.stringify(ctx.value)} is not allowed (${why}); use some of ${ASYMMETRIC_JWS_ALGORITHMS.join(", ")}`,
  });
});

export const OAuthTable = z
  .strictObject({
    issuer: IssuerUrl,
    audience: z.union([NonEmpty.transform((value) => [value]), z.array(NonEmpty).min(1)]).optional(),
    scopes_supported: Names,
    principal_claim: NonEmpty.default("sub"),
    name_claim: NonEmpty.default("name"),
    groups_claim: NonEmpty.default("groups"),
    admin_groups: Names,
    approver_groups: Names,
    admin_scopes: Names,
    approver_scopes: Names,
    algorithms: z
      .array(Algorithm)
      .min(1, { error: "must name at least one algorithm" })
      .default(() => [...ASYMMETRIC_JWS_ALGORITHMS]),
    introspection_client_id: NonEmpty.optional(),
    introspection_client_secret_env: NonEmpty.optional(),
    introspection_endpoint: IssuerUrl.optional(),
  })
  .check((ctx) => {
    const { introspection_client_id: id, introspection_client_secret_env: secret } = ctx.value;
    if ((id === undefined) === (secret === undefined)) return;
    ctx.issues.push({
      code: "custom",
      input: ctx.value,
      path: [id === undefined ? "introspection_client_id" : "introspection_client_secret_env"],
      message:
        "introspection needs both introspection_client_id and introspection_client_secret_env (the gateway's own client at the issuer); set both, or neither to accept JWTs only",
    });
  })
  .transform(
    (t): OAuthConfig => ({
      issuer: t.issuer,
      ...(t.audience === undefined ? {} : { audience: t.audience }),
      scopesSupported: t.scopes_supported,
      principalClaim: t.principal_claim,
      nameClaim: t.name_claim,
      groupsClaim: t.groups_claim,
      adminGroups: t.admin_groups,
      approverGroups: t.approver_groups,
      adminScopes: t.admin_scopes,
      approverScopes: t.approver_scopes,
      algorithms: t.algorithms as JwsAlgorithm[],
      ...(t.introspection_client_id === undefined || t.introspection_client_secret_env === undefined
        ? {}
        : {
            introspection: {
              clientId: t.introspection_client_id,
              clientSecretEnv: t.introspection_client_secret_env,
              ...(t.introspection_endpoint === undefined ? {} : { endpoint: t.introspection_endpoint }),
            },
          }),
    }),
  );

/** `[gateway] public_url`: scheme, host and port only; the canonical URIs of the endpoints hang off it. */
export const PublicUrl = NonEmpty.check((ctx) => {
  const url = URL.parse(ctx.value);
  const problem =
    url === null || (url.protocol !== "https:" && url.protocol !== "http:")
      ? "must be an absolute http(s) URL such as https://toolbus.example.com"
      : url.pathname !== "/" || url.search !== "" || url.hash !== "" || url.username !== ""
        ? "must be an origin only (scheme, host, port): no path, query, fragment or user; toolbus serves /mcp and its other routes at the root"
        : undefined;
  if (problem) ctx.issues.push({ code: "custom", input: ctx.value, message: problem });
}).transform((value) => new URL(value).origin);

export type ClientSecretResolution = { ok: true; secret: string } | { ok: false; message: string };

/** The introspection client's secret from `introspection_client_secret_env` (or its `_FILE`). */
export function resolveIntrospectionSecret(
  introspection: IntrospectionConfig,
  env: Env,
  read: SecretFileReader = readSecretFile,
): ClientSecretResolution {
  const variable = introspection.clientSecretEnv;
  const secret = secretFromEnv(env, variable, read);
  const where = "(gateway.oauth.introspection_client_secret_env)";
  if (secret.state === "invalid") return { ok: false, message: `${secret.message} ${where}` };
  if (secret.state === "unset" || secret.value === "") {
    return {
      ok: false,
      message: `Environment variable ${variable} ${where} is not set; set it (or ${fileVariableOf(variable)} to a file holding it) to the secret of the client ${introspection.clientId}, or remove the introspection keys to accept JWTs only`,
    };
  }
  return { ok: true, secret: secret.value };
}
