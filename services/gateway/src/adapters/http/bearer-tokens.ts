/** Bearer-token check in constant time per token (the configured tokens are hashed once). */
import { createHash, timingSafeEqual } from "node:crypto";

export function tokenMatcher(tokens: readonly string[]): (candidate: string | undefined) => boolean {
  const digests = tokens.map(digest);
  return (candidate) => {
    if (candidate === undefined) return false;
    const given = digest(candidate);
    let match = false;
    for (const expected of digests) match = timingSafeEqual(given, expected) || match;
    return match;
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
