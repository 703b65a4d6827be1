/**
 * Loading a service's configuration: validated once at start-up with the service's zod schema,
 * every problem reported at once, the result frozen all the way down.
 */
import type { z } from "zod";
import { configErrorMessage, configProblems } from "./core/config-problems.js";
import { deepFreeze } from "./core/deep-freeze.js";

/** Bad configuration: a local error that crashes start-up loudly; `problems` has one line per field. */
export class ConfigError extends Error {
  readonly problems: readonly string[];

  constructor(problems: readonly string[]) {
    super(configErrorMessage(problems));
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/**
 * Parses `source` (often `process.env`) with `schema`; throws `ConfigError` listing every
 * problem, each top-level field named as `names` says (the variable or flag a user sets).
 */
export function loadConfig<S extends z.ZodType>(
  schema: S,
  source: unknown,
  names?: Readonly<Record<string, string>>,
): Readonly<z.output<S>> {
  const result = schema.safeParse(source);
  if (!result.success) throw new ConfigError(configProblems(result.error, names));
  return deepFreeze(result.data);
}
