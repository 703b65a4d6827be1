/** Bearer tokens to principals, compared in constant time per token (the configured ones hashed once). */
import { createHash, timingSafeEqual } from "node:crypto";
import type { GatewayPrincipal } from "@toolbus/config";
import type { Principal } from "@toolbus/protocol";

export type { Principal };

export function tokenMatcher(
  principals: readonly GatewayPrincipal[],
): (candidate: string | undefined) => Principal | undefined {
  const known = principals.map(({ name, role, token }) => ({
    principal: { name, role, source: "token" } satisfies Principal,
    digest: digest(token),
  }));
  return (candidate) => {
    if (candidate === undefined) return undefined;
    const given = digest(candidate);
    let match: Principal | undefined;
    // Every token is compared, so the time taken says nothing about which one matched.
    for (const entry of known) if (timingSafeEqual(given, entry.digest)) match ??= entry.principal;
    return match;
  };
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
