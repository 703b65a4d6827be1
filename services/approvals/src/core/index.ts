/** The approvals core: running hooks and reading their verdicts, a human's choice, list cursors. The policy itself is @toolbus/policy. */
export * from "./hook-env.js";
export * from "./hook-outcome.js";
export * from "./hook-run.js";
export * from "./human-choice.js";
export * from "./list-cursor.js";
export * from "./post-tool-use-outcome.js";
