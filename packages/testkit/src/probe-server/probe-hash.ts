import { createHash } from "node:crypto";

/** The first 16 hex of a secret's SHA-256, as the probe server's `loot` reports the seeds it found. */
export function probeHash(secret: string): string {
  return createHash("sha256").update(secret).digest("hex").slice(0, 16);
}
