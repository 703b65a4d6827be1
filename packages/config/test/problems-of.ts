/** Test helper: the problems a config parse throws, so tests compare the whole list. */
import { ConfigFileError, type ConfigProblem } from "../src/problems.js";

export function problemsOf(run: () => unknown): ConfigProblem[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigFileError) return [...error.problems];
    throw error;
  }
  throw new Error("expected a ConfigFileError, but the config parsed");
}
