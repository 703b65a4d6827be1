/** Turning a failed configuration parse into one line per problem, each naming the field and the fix. */
import type { z } from "zod";

/**
 * `NATS_URL: missing; set it (expected string)` for an absent value, else
 * `<path>: <the schema's message>`; schemas put the fix in their messages. `names` gives the
 * name a user sets for a top-level field (`logLevel` → `LOG_LEVEL`), to say it in its place.
 */
export function configProblems(error: z.ZodError, names: Readonly<Record<string, string>> = {}): string[] {
  return error.issues.map((issue) => {
    const [field, ...rest] = issue.path.map(String);
    const named = field !== undefined && Object.hasOwn(names, field) ? names[field] : field;
    const path = named === undefined ? "(root)" : [named, ...rest].join(".");
    if (issue.code === "invalid_type" && / received undefined$/.test(issue.message)) {
      return `${path}: missing; set it (expected ${issue.expected})`;
    }
    return `${path}: ${issue.message}`;
  });
}

export function configErrorMessage(problems: readonly string[]): string {
  const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
  return `invalid configuration (${count}); fix each and start again:\n${problems.map((p) => `  - ${p}`).join("\n")}`;
}
