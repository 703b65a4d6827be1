/**
 * The Content-Security-Policy of a self-contained HTML page: its own inline `<script>` and
 * `<style>` blocks allowed by hash (nothing else runs, not even an injected inline script),
 * requests to its own origin only, and never inside a frame.
 */
import { createHash } from "node:crypto";

export function pageCsp(html: string): string {
  const hashes = (tag: string) =>
    [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, "g"))]
      .map(
        (match) =>
          `'sha256-${createHash("sha256")
            .update(match[1] ?? "", "utf8")
            .digest("base64")}'`,
      )
      .join(" ");
  return [
    "default-src 'none'",
    `script-src ${hashes("script") || "'none'"}`,
    `style-src ${hashes("style") || "'none'"}`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Headers for serving such a page (the guard adds the rest of the security headers). */
export function pageHeaders(html: string): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-cache",
    "content-security-policy": pageCsp(html),
  };
}
