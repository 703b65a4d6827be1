import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { pageCsp } from "../src/page-csp.js";

const sha = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;

describe("a page's Content-Security-Policy", () => {
  it("allows the page's own inline script and style by hash, its own origin for requests, and no framing", () => {
    const html = "<html><head><style>p{}</style></head><body><script>go()</script></body></html>";
    expect(pageCsp(html)).toBe(
      `default-src 'none'; script-src ${sha("go()")}; style-src ${sha("p{}")}; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    );
  });

  it("allows no script at all on a page without one", () => {
    expect(pageCsp("<p>hi</p>")).toContain("script-src 'none';");
  });
});
