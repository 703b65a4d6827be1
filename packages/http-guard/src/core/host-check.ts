/**
 * DNS-rebinding and cross-site protection: a request is served only when its Host header, and
 * its Origin header when it has one, name a host from `[gateway] allowed_hosts` (ports are
 * ignored). `Origin: null` (a sandboxed frame, a `file:` page, a cross-site redirect) may read
 * but never change state. `*` in the list turns the host check off (for a server behind a proxy
 * that checks hosts itself); the `Origin: null` rule stays.
 */

/** Methods that only read: the ones an `Origin: null` request may use. */
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export type HostCheck = { ok: true } | { ok: false; message: string };

export function checkHost(
  headers: { host?: string | undefined; origin?: string | undefined },
  allowedHosts: readonly string[],
  method = "GET",
): HostCheck {
  if (headers.origin?.trim() === "null" && !SAFE_METHODS.has(method.toUpperCase())) {
    return {
      ok: false,
      message: `Forbidden: Origin null (a sandboxed frame, a file: page or a cross-site redirect) may not ${method}; send the request from a page served by an allowed host`,
    };
  }
  if (allowedHosts.includes("*")) return { ok: true };
  const allowed = new Set(allowedHosts.map(normalizeHost));
  const hostName = headers.host === undefined ? undefined : hostOfHostHeader(headers.host);
  if (hostName === undefined || !allowed.has(hostName)) {
    return {
      ok: false,
      message: `Forbidden: Host header ${JSON.stringify(headers.host ?? "")} is not an allowed host (${allowedHosts.join(", ")}); add it to [gateway] allowed_hosts if this gateway should answer to it`,
    };
  }
  if (headers.origin !== undefined && headers.origin !== "null") {
    const originHost = hostOfOrigin(headers.origin);
    if (originHost === undefined || !allowed.has(originHost)) {
      return {
        ok: false,
        message: `Forbidden: Origin ${JSON.stringify(headers.origin)} is not an allowed host (${allowedHosts.join(", ")}); add it to [gateway] allowed_hosts if browsers on it may call this gateway`,
      };
    }
  }
  return { ok: true };
}

/** Lower case, IPv6 in brackets: `[::1]`, `localhost`, `127.0.0.1`. */
function normalizeHost(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.includes(":") && !lower.startsWith("[")) return `[${lower}]`;
  return lower;
}

/** `example.com:8080` → `example.com`; `[::1]:8080` → `[::1]`; malformed → undefined. */
export function hostOfHostHeader(value: string): string | undefined {
  const trimmed = value.trim().toLowerCase();
  if (trimmed === "") return undefined;
  if (trimmed.startsWith("[")) {
    const end = trimmed.indexOf("]");
    if (end < 0) return undefined;
    const rest = trimmed.slice(end + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return undefined;
    return trimmed.slice(0, end + 1);
  }
  const match = /^([^:/\s@]+)(?::\d{1,5})?$/.exec(trimmed);
  return match ? match[1] : undefined;
}

function hostOfOrigin(origin: string): string | undefined {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]+)$/i.exec(origin.trim().replace(/\/$/, ""));
  if (!match) return undefined;
  const authority = match[1]!;
  return hostOfHostHeader(authority.slice(authority.lastIndexOf("@") + 1));
}
