/**
 * Facts that have one source, guarded against a new copy: the toolbus version (TOOLBUS_VERSION),
 * the list of log levels (LOG_LEVELS), the HTTP status of each wire error code
 * (HTTP_STATUS_BY_CODE) and the bus names built from the prefix (packages/protocol). Each check
 * reads the production sources (`src/` of every workspace package) for the fact spelled out
 * again; a hit names the file and what to import instead.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { LOG_LEVELS } from "@toolbus/bus";
import { ERROR_CODES, TOOLBUS_VERSION } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { repoPath, repoRoot, workspacePackages } from "../deploy/repo.js";

/** Every source under `src/` of the packages and services, relative to the repository. */
function productionSources(): Array<{ file: string; text: string }> {
  const walk = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return walk(path);
      return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [path] : [];
    });
  return (
    workspacePackages()
      // The benchmarks and the tests are clients of toolbus, not toolbus.
      .filter(({ dir }) => dir.startsWith("packages/") || dir.startsWith("services/"))
      .flatMap(({ dir }) => {
        try {
          return walk(repoPath(`${dir}/src`));
        } catch {
          return []; // a package without src/
        }
      })
      .map((path) => ({ file: relative(repoRoot, path), text: readFileSync(path, "utf8") }))
  );
}

const sources = productionSources();

/** Files other than `owner` whose text matches `pattern`. */
const copiesOf = (pattern: RegExp, owner: string) =>
  sources.filter(({ file, text }) => file !== owner && pattern.test(text)).map(({ file }) => file);

describe("one source for each fact", () => {
  it("reads enough of the repository to mean something", () => {
    const owners = [
      "packages/protocol/src/version.ts",
      "packages/bus/src/service-settings.ts",
      "packages/protocol/src/http-status.ts",
      "services/gateway/src/main.ts",
    ];
    expect(owners.filter((owner) => !sources.some(({ file }) => file === owner))).toEqual([]);
  });

  it("spells the toolbus version only in TOOLBUS_VERSION (import it from @toolbus/protocol)", () => {
    const literal = new RegExp(`["'\`]${TOOLBUS_VERSION.replaceAll(".", "\\.")}["'\`]`);
    expect(copiesOf(literal, "packages/protocol/src/version.ts")).toEqual([]);
  });

  it("gives every workspace package the toolbus version", () => {
    const others = workspacePackages()
      .map(({ dir }) => ({
        dir,
        version: (JSON.parse(readFileSync(repoPath(`${dir}/package.json`), "utf8")) as { version?: string })
          .version,
      }))
      .filter(({ version }) => version !== TOOLBUS_VERSION);
    expect(others).toEqual([]);
  });

  it("lists the log levels only in LOG_LEVELS (import it, or LogLevelSetting, from @toolbus/bus)", () => {
    // An array literal naming four levels or more is a copy (MCP's own levels are another list).
    const level = new RegExp(`["'\`](${LOG_LEVELS.join("|")})["'\`]`, "g");
    const lists = sources
      .filter(({ file }) => file !== "packages/bus/src/service-settings.ts")
      .filter(({ text }) =>
        [...text.matchAll(/\[[^[\]]*\]/g)].some(
          ([array]) => new Set([...array.matchAll(level)].map((match) => match[1])).size >= 4,
        ),
      )
      .map(({ file }) => file);
    expect(lists).toEqual([]);
  });

  it("maps error codes to HTTP statuses only in HTTP_STATUS_BY_CODE (import it from @toolbus/protocol)", () => {
    // Two codes or more, each with a three-digit number: a status table.
    const entry = new RegExp(`\\b(${ERROR_CODES.join("|")})\\s*:\\s*[1-5]\\d\\d\\b`, "g");
    const tables = sources
      .filter(({ file }) => file !== "packages/protocol/src/http-status.ts")
      .filter(({ text }) => new Set([...text.matchAll(entry)].map((match) => match[1])).size >= 2)
      .map(({ file }) => file);
    expect(tables).toEqual([]);
  });

  it("spells the server-name rule only in SERVER_NAME_PATTERN (import it, or ServerNameSchema, from @toolbus/protocol)", () => {
    // `^[a-zA-Z0-9_-]+$` in any spelling, as a regex or in a message.
    const rule = /\^\[(?:a-zA-Z0-9_|A-Za-z0-9_|\\w)-\]\+\$/g;
    // The same characters make other rules, each its own fact, named where it is defined.
    const otherRules = new Set([
      "packages/protocol/src/schemas/primitives.ts SERVER_NAME_PATTERN",
      "packages/protocol/src/subjects.ts PREFIX_PATTERN", // a subject prefix
      "packages/bus/src/core/micro-protocol.ts NAME", // a NATS micro service name
      "packages/config/src/problems.ts BARE_KEY", // a TOML bare key
      "packages/policy/src/grant-keys.ts READABLE_TOKEN", // a KV key token left as it is
    ]);
    const spelled = sources.flatMap(({ file, text }) =>
      text.split("\n").flatMap((line, index) => {
        if (line.match(rule) === null) return [];
        const name = /^\s*(?:export\s+)?const\s+([A-Za-z_]\w*)\s*=\s*\/\^\[/.exec(line)?.[1];
        return otherRules.has(`${file} ${name}`) ? [] : [`${file}:${index + 1}: ${line.trim()}`];
      }),
    );
    expect(spelled).toEqual([]);
    // The rule itself is still where this test looks for it.
    expect(
      sources.some(
        ({ file, text }) =>
          file === "packages/protocol/src/schemas/primitives.ts" &&
          /export const SERVER_NAME_PATTERN = \/\^\[a-zA-Z0-9_-\]\+\$\/;/.test(text),
      ),
    ).toBe(true);
  });

  it("runs a callId once only through runOnce of @toolbus/bus (a ledger is claimed nowhere else)", () => {
    // Claiming a ledger, and answering what the claim found, is the one run-once algorithm.
    const claims = sources
      .filter(({ text }) => /\.claim\(\s*[\w.]*callId/.test(text))
      .map(({ file }) => file)
      // The ledger itself claims again when a record expired between its create and its read.
      .filter((file) => !["packages/bus/src/run-once.ts", "packages/bus/src/call-ledger.ts"].includes(file));
    expect(claims).toEqual([]);
    expect(sources.some(({ file }) => file === "packages/bus/src/run-once.ts")).toBe(true);
  });

  it("builds bus names from the prefix only in packages/protocol (createSubjects, internalSubjects)", () => {
    // A subject (`<prefix>.x`) or a bucket, stream or store (`<prefix>_x`) made from a prefix.
    const built = /\$\{[^}]*prefix[^}]*\}[._][A-Za-z]/;
    const outside = sources
      .filter(({ file }) => !file.startsWith("packages/protocol/src/"))
      // A Postgres NOTIFY channel, not a name on the bus.
      .filter(({ file }) => file !== "services/approvals/src/adapters/pg/decision-signals.ts")
      .filter(({ text }) => built.test(text))
      .map(({ file }) => file);
    expect(outside).toEqual([]);
  });
});
