/**
 * The two HTML pages toolbus serves, the console (`/`, the gateway) and the approvals inbox
 * (`/approvals`, the approvals service or the gateway that mounts it), assembled once from the
 * static files in `pages/`: each page's HTML with the shared style and script and its own,
 * inlined (one `<style>`, one `<script>`) so the page needs no other request and its CSP allows
 * exactly these by hash (`pageHeaders`). The files are plain CSS and JavaScript that biome checks.
 */
import { readFileSync } from "node:fs";

export type PageName = "console" | "inbox";

function asset(file: string): string {
  return readFileSync(new URL(`../pages/${file}`, import.meta.url), "utf8");
}

function assemble(name: PageName): string {
  return asset(`${name}.html`)
    .replace(
      `<!-- styles: shared.css, then ${name}.css -->`,
      () => `<style>\n${asset("shared.css")}\n${asset(`${name}.css`)}</style>`,
    )
    .replace(
      `<!-- scripts: shared.js, then ${name}.js -->`,
      () => `<script>\n${asset("shared.js")}\n${asset(`${name}.js`)}</script>`,
    );
}

export const CONSOLE_PAGE = assemble("console");
export const INBOX_PAGE = assemble("inbox");
