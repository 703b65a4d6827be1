/** The approvals core: pure policy, hooks and prompt logic, shared with the dispatcher. */
export * from "./approval-prompt.js";
export * from "./approval-required.js";
export * from "./call-binding.js";
export * from "./decide.js";
export * from "./grant-keys.js";
export * from "./hook-env.js";
export * from "./hook-outcome.js";
export * from "./hook-payload.js";
export * from "./hook-run.js";
export * from "./hooks-file.js";
export * from "./human-choice.js";
export * from "./list-cursor.js";
export * from "./post-tool-use-outcome.js";
export * from "./types.js";
