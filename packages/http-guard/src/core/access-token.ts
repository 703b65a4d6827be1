/**
 * What makes an OAuth access token good at this edge, without the network: the checks made
 * before any key is fetched (size, shape, an allowed algorithm, the configured issuer), the
 * verification options, the claims of an introspection answer, why a token was refused in
 * words a client and a log can use (never the token), and the principal a good token stands for.
 */
import type { JwsAlgorithm, OAuthConfig } from "@toolbus/config";
import { OAUTH_PRINCIPAL_PREFIX, type Principal, type PrincipalRole } from "@toolbus/protocol";
import { decodeJwt, decodeProtectedHeader } from "jose";

/** Clocks disagree a little: `exp` and `nbf` are checked with this much leeway. */
export const CLOCK_SKEW_SEC = 30;
/**
 * Larger is not a token: Node refuses headers past 16 KiB anyway, and nothing this size is
 * decoded or sent on for introspection.
 */
export const MAX_TOKEN_BYTES = 12 * 1024;
/** The principal claim's value must fit a principal's name (256) after `oauth:`. */
export const MAX_PRINCIPAL_CLAIM_LENGTH = 200;
/** Groups and scopes kept from one token; past these a token is refused rather than cut. */
export const MAX_GROUPS = 256;
export const MAX_SCOPES = 256;

/** A refusal: `reason` completes "the access token was refused: …" (a client reads it; a log keeps it). */
export type TokenRefusal = { ok: false; reason: string };

/** Three base64url segments: a JWS in compact form. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/**
 * The checks a JWT must pass before its issuer's keys are looked up, so a token of another
 * issuer, unsigned or HMAC-signed never costs a fetch: decodable, an allowed `alg`, the
 * configured `iss`. (Its size was checked first: at most `MAX_TOKEN_BYTES`.)
 */
export function precheckJwt(
  token: string,
  expected: { issuer: string; algorithms: readonly JwsAlgorithm[] },
): { ok: true } | TokenRefusal {
  let alg: unknown;
  let iss: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
    iss = decodeJwt(token).iss;
  } catch {
    return refused("it is not a well-formed JWT");
  }
  if (typeof alg !== "string" || !(expected.algorithms as readonly string[]).includes(alg)) {
    return refused(
      `it is signed with ${JSON.stringify(alg ?? null)}, which this server does not accept (${expected.algorithms.join(", ")})`,
    );
  }
  if (iss !== expected.issuer) {
    return refused(
      `its issuer ${JSON.stringify(iss ?? null)} is not ${expected.issuer}; get a token from that issuer`,
    );
  }
  return { ok: true };
}

/** What `jwtVerify` is told: the issuer, the accepted audiences, the algorithms, the skew, `exp` required. */
export function verifyOptions(
  oauth: Pick<OAuthConfig, "issuer" | "algorithms">,
  audiences: readonly string[],
): {
  issuer: string;
  audience: string[];
  algorithms: string[];
  clockTolerance: number;
  requiredClaims: string[];
} {
  return {
    issuer: oauth.issuer,
    audience: [...audiences],
    algorithms: [...oauth.algorithms],
    clockTolerance: CLOCK_SKEW_SEC,
    // A token without an expiry would be good forever.
    requiredClaims: ["exp"],
  };
}

/** A failed verification as `jose` reports it: its code, and for a claim, which and why. */
export interface VerifyFailure {
  code?: string;
  claim?: string;
  reason?: string;
}

/**
 * Why a verification failed, or `unavailable` when the fault is reaching the issuer's keys (the
 * client is not at fault and should retry, not sign in again).
 */
export function verifyRefusal(
  failure: VerifyFailure,
  audiences: readonly string[],
): TokenRefusal | "unavailable" {
  switch (failure.code) {
    case "ERR_JWT_EXPIRED":
      return refused("it has expired; get a new one");
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      return claimRefusal(failure, audiences);
    case "ERR_JWKS_NO_MATCHING_KEY":
    case "ERR_JWKS_MULTIPLE_MATCHING_KEYS":
      return refused("it is signed with a key its issuer does not publish");
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return refused("its signature does not verify with its issuer's key");
    case "ERR_JOSE_ALG_NOT_ALLOWED":
      return refused("it is signed with an algorithm this server does not accept");
    case "ERR_JOSE_NOT_SUPPORTED":
      return refused("it uses a JOSE header or algorithm this server does not support");
    case "ERR_JWS_INVALID":
    case "ERR_JWT_INVALID":
      return refused("it is not a well-formed JWT");
    default:
      return "unavailable";
  }
}

function claimRefusal(failure: VerifyFailure, audiences: readonly string[]): TokenRefusal {
  const missing = failure.reason === "missing";
  switch (failure.claim) {
    case "aud":
      return missing
        ? refused(
            `it names no audience; get a token for ${audiences.join(" or ")} (the resource parameter, RFC 8707)`,
          )
        : refused(
            `its audience is not ${audiences.join(" or ")}; get a token for this resource (the resource parameter, RFC 8707)`,
          );
    case "exp":
      return missing ? refused("it has no expiry (exp)") : refused("it has expired; get a new one");
    case "nbf":
      return refused("it is not valid yet (nbf)");
    case "iat":
      return refused("it was issued in the future (iat)");
    case "iss":
      return refused("its issuer is not the one this server trusts");
    default:
      return refused(`its ${failure.claim ?? "claims"} claim is not acceptable`);
  }
}

/** An introspection answer (RFC 7662 §2.2) as far as this server reads it. */
export interface IntrospectionAnswer {
  active?: unknown;
  token_type?: unknown;
  exp?: unknown;
  nbf?: unknown;
  iss?: unknown;
  aud?: unknown;
  [claim: string]: unknown;
}

/**
 * Whether an introspection answer vouches for an access token for this resource: active, a
 * bearer access token (a refresh token is not one), unexpired, from the configured issuer when
 * it says, and for one of `audiences` — which it must say: a token for nobody in particular is
 * a token for every server of the issuer.
 */
export function checkIntrospection(
  answer: IntrospectionAnswer,
  expected: { issuer: string; audiences: readonly string[]; nowSec: number },
): { ok: true } | TokenRefusal {
  if (answer.active !== true)
    return refused("the issuer says it is not active (expired, revoked or unknown)");
  if (answer.token_type !== undefined && String(answer.token_type).toLowerCase() !== "bearer") {
    return refused(`the issuer says it is a ${String(answer.token_type)}, not a bearer access token`);
  }
  if (typeof answer.exp !== "number") return refused("it has no expiry (exp)");
  if (answer.exp + CLOCK_SKEW_SEC <= expected.nowSec) return refused("it has expired; get a new one");
  if (typeof answer.nbf === "number" && answer.nbf - CLOCK_SKEW_SEC > expected.nowSec) {
    return refused("it is not valid yet (nbf)");
  }
  if (answer.iss !== undefined && answer.iss !== expected.issuer) {
    return refused("its issuer is not the one this server trusts");
  }
  const audiences =
    typeof answer.aud === "string" ? [answer.aud] : Array.isArray(answer.aud) ? answer.aud : [];
  if (audiences.length === 0) {
    return refused(
      `it names no audience; get a token for ${expected.audiences.join(" or ")} (the resource parameter, RFC 8707)`,
    );
  }
  if (!audiences.some((audience) => expected.audiences.includes(audience as string))) {
    return refused(
      `its audience is not ${expected.audiences.join(" or ")}; get a token for this resource (the resource parameter, RFC 8707)`,
    );
  }
  return { ok: true };
}

/** How claims become a principal and its role (`[gateway.oauth]`). */
export type ClaimMapping = Pick<
  OAuthConfig,
  | "issuer"
  | "principalClaim"
  | "nameClaim"
  | "groupsClaim"
  | "adminGroups"
  | "approverGroups"
  | "adminScopes"
  | "approverScopes"
>;

/**
 * The principal a good token stands for: named `oauth:<principal claim>`, its groups and
 * scopes as the token says, and a role: admin when a group or scope of the admin ones is
 * there, else approver likewise, else caller.
 */
export function principalFromClaims(
  claims: Readonly<Record<string, unknown>>,
  mapping: ClaimMapping,
): { ok: true; principal: Principal } | TokenRefusal {
  const subject = claimAt(claims, mapping.principalClaim);
  if (typeof subject !== "string" || subject === "") {
    return refused(`it has no ${mapping.principalClaim} claim naming who it is for`);
  }
  if (subject.length > MAX_PRINCIPAL_CLAIM_LENGTH || /\p{Cc}/u.test(subject)) {
    return refused(
      `its ${mapping.principalClaim} claim is not a name (at most ${MAX_PRINCIPAL_CLAIM_LENGTH} characters, no control characters)`,
    );
  }
  const groups = stringList(claimAt(claims, mapping.groupsClaim));
  const scopes = scopesOf(claims);
  if (groups.length > MAX_GROUPS) return refused(`it lists more than ${MAX_GROUPS} groups`);
  if (scopes.length > MAX_SCOPES) return refused(`it grants more than ${MAX_SCOPES} scopes`);
  const displayName = claimAt(claims, mapping.nameClaim);
  return {
    ok: true,
    principal: {
      name: `${OAUTH_PRINCIPAL_PREFIX}${subject}`,
      role: roleOf(groups, scopes, mapping),
      source: "oauth",
      subject,
      issuer: mapping.issuer,
      ...(typeof displayName === "string" && displayName !== ""
        ? { displayName: displayName.slice(0, 256) }
        : {}),
      groups,
      scopes,
    },
  };
}

export function roleOf(
  groups: readonly string[],
  scopes: readonly string[],
  mapping: Pick<ClaimMapping, "adminGroups" | "approverGroups" | "adminScopes" | "approverScopes">,
): PrincipalRole {
  const has = (mine: readonly string[], wanted: readonly string[]) =>
    wanted.some((one) => mine.includes(one));
  if (has(groups, mapping.adminGroups) || has(scopes, mapping.adminScopes)) return "admin";
  if (has(groups, mapping.approverGroups) || has(scopes, mapping.approverScopes)) return "approver";
  return "caller";
}

/** `scope` (space-separated, RFC 9068) and `scp` (a list or a string: Entra ID, Okta), together. */
export function scopesOf(claims: Readonly<Record<string, unknown>>): string[] {
  const split = (value: unknown) =>
    typeof value === "string" ? value.split(" ").filter((scope) => scope !== "") : stringList(value);
  return [...new Set([...split(claims.scope), ...split(claims.scp)])];
}

/** The claim named `name`, or, when there is none by that name, the one its dotted path reaches. */
export function claimAt(claims: Readonly<Record<string, unknown>>, name: string): unknown {
  if (Object.hasOwn(claims, name)) return claims[name];
  let value: unknown = claims;
  for (const part of name.split(".")) {
    if (value === null || typeof value !== "object" || Array.isArray(value) || !Object.hasOwn(value, part))
      return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A list of strings from a claim: a string is a list of one; anything not a string is left out. */
function stringList(value: unknown): string[] {
  if (typeof value === "string") return value === "" ? [] : [value];
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is string => typeof item === "string" && item !== "");
}

function refused(reason: string): TokenRefusal {
  return { ok: false, reason };
}
