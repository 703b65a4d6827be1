/** Config problems: where one is, how zod issues become readable ones, and the start-up error that lists them all. */
import type { z } from "zod";

/** One thing wrong with a config file. `at` is a dotted key path (`mcp_servers.github.url`), "" for the whole file. */
export interface ConfigProblem {
  at: string;
  message: string;
}

export type PathSegment = string | number;

/** Thrown at start-up with every problem found, so the operator fixes the file in one pass. */
export class ConfigFileError extends Error {
  override readonly name = "ConfigFileError";

  constructor(
    /** The file the problems are in (or what stood in for one, e.g. `TOOLBUS_HTTP_PORT`). */
    readonly path: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    super(formatProblems(path, problems));
  }
}

/**
 * ```
 * Invalid toolbus config (2 problems):
 *   /etc/toolbus.toml: mcp_servers.a: invalid transport
 *   /etc/toolbus.toml: mcp_servers.b: url is not supported for stdio
 * ```
 */
export function formatProblems(path: string, problems: readonly ConfigProblem[]): string {
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  const lines = problems.map((p) => `  ${path}: ${p.at === "" ? "" : `${p.at}: `}${p.message}`);
  return [`Invalid toolbus config (${count}):`, ...lines].join("\n");
}

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

/** `["mcp_servers", "bad name", "args", 0]` → `mcp_servers."bad name".args[0]` (TOML's own spelling). */
export function formatPath(path: readonly PathSegment[]): string {
  let out = "";
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`;
    else {
      const key = BARE_KEY.test(segment) ? segment : JSON.stringify(segment);
      out += out === "" ? key : `.${key}`;
    }
  }
  return out;
}

export function problem(path: readonly PathSegment[], message: string): ConfigProblem {
  return { at: formatPath(path), message };
}

/** What the reader wrote, for `expected a string, got 5`. */
export function describeValue(value: unknown, tableWord: "a table" | "an object"): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (value instanceof Date) return "a date";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
    case "number":
    case "boolean":
    case "bigint":
      return String(value);
    case "object":
      return tableWord;
    default:
      return typeof value;
  }
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "true or false",
  array: "an array",
  object: "TABLE",
  record: "TABLE",
};

/**
 * A zod error map in the config's own words: `expected a string, got 5`, `expected one of `auto`, `prompt`,
 * got "ask"`, and for unknown keys the nearest known one, so a typo names its fix.
 */
export function configErrorMap(tableWord: "a table" | "an object"): z.core.$ZodErrorMap {
  return (issue) => {
    switch (issue.code) {
      case "invalid_type": {
        const expected = EXPECTED[issue.expected] ?? issue.expected;
        return `expected ${expected === "TABLE" ? tableWord : expected}, got ${describeValue(issue.input, tableWord)}`;
      }
      case "invalid_value":
        return `expected one of ${issue.values.map((v) => `\`${String(v)}\``).join(", ")}, got ${describeValue(issue.input, tableWord)}`;
      case "unrecognized_keys": {
        const known = knownKeys(issue.inst);
        return issue.keys.map((key) => unknownKeyMessage(key, known)).join("; ");
      }
      default:
        return undefined;
    }
  };
}

/** Legacy keys still accepted but never worth suggesting. */
const NOT_SUGGESTED = new Set(["startup_timeout_ms"]);

function knownKeys(inst: unknown): string[] {
  const def = (inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def;
  return Object.keys(def?.shape ?? {}).filter((key) => !NOT_SUGGESTED.has(key));
}

export function unknownKeyMessage(key: string, known: readonly string[]): string {
  const suggestion = nearest(key, known);
  return suggestion === undefined
    ? `unknown key \`${key}\``
    : `unknown key \`${key}\` (did you mean \`${suggestion}\`?)`;
}

/** The known key closest to a typo, if any is close enough to be what was meant. */
function nearest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(key.toLowerCase(), candidate);
    if (distance <= Math.max(2, Math.floor(candidate.length / 3)) && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The issues of a failed parse as problems, paths prefixed with where the parsed value sits. */
export function issuesToProblems(
  issues: readonly z.core.$ZodIssue[],
  prefix: readonly PathSegment[],
): ConfigProblem[] {
  return issues.map((issue) =>
    problem([...prefix, ...issue.path.map((s) => (typeof s === "symbol" ? String(s) : s))], issue.message),
  );
}
