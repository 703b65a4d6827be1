/**
 * What a browser keeps between requests, sealed so that only a gateway with the key can read
 * or make it: an encrypted JWT (JWE, `dir` + `A256GCM`, `jose`), authenticated by its AES-GCM
 * tag — a cookie changed by one bit, or made without the key, does not open. Each kind of
 * cookie has a key of its own, derived from the one secret (HKDF-SHA256), so a sign-in
 * attempt can never be passed off as a session. The secret is `[gateway.signin]
 * session_secret_env`, the same on every replica, or a random one of this process.
 */
import { createSecretKey, hkdfSync, type KeyObject, randomBytes } from "node:crypto";
import { EncryptJWT, type JWTPayload, jwtDecrypt } from "jose";

export type SealKind = "session" | "attempt";

export type Opened =
  | { ok: true; claims: JWTPayload & Record<string, unknown> }
  | { ok: false; reason: string };

export class CookieSeal {
  /** Key objects, made once, rather than raw bytes imported again on every use. */
  readonly #keys: Record<SealKind, KeyObject>;

  /** `secret`: `session_secret_env`'s value; undefined: a key of this process alone. */
  constructor(secret: string | undefined) {
    const material = secret === undefined ? randomBytes(32) : Buffer.from(secret, "utf8");
    const derive = (kind: SealKind) =>
      createSecretKey(
        new Uint8Array(hkdfSync("sha256", material, "toolbus sign-in", `toolbus ${kind} cookie v1`, 32)),
      );
    this.#keys = { session: derive("session"), attempt: derive("attempt") };
  }

  /** `claims` sealed as `kind`, readable until `expSec` (seconds since the epoch). */
  seal(kind: SealKind, claims: Record<string, unknown>, expSec: number): Promise<string> {
    return new EncryptJWT(claims)
      .setProtectedHeader({ alg: "dir", enc: "A256GCM" })
      .setIssuedAt()
      .setExpirationTime(expSec)
      .encrypt(this.#keys[kind]);
  }

  /** The claims of a cookie sealed as `kind` that has not expired, or why not. */
  async open(kind: SealKind, value: string, maxBytes: number): Promise<Opened> {
    if (value.length > maxBytes) return { ok: false, reason: `it is longer than ${maxBytes} bytes` };
    try {
      const { payload } = await jwtDecrypt(value, this.#keys[kind], {
        keyManagementAlgorithms: ["dir"],
        contentEncryptionAlgorithms: ["A256GCM"],
        requiredClaims: ["exp"],
      });
      return { ok: true, claims: payload as JWTPayload & Record<string, unknown> };
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "ERR_JWT_EXPIRED") return { ok: false, reason: "it has expired" };
      return { ok: false, reason: "it was not made by this gateway (or was changed since)" };
    }
  }
}
