/**
 * @toolbus/policy: the approval policy, pure and as data — the modes and the mode rule, the
 * deployment's policy words, the hooks file, the `decide` step function, and the effective policy
 * the approvals service publishes for the dispatcher. No I/O.
 */
export * from "./approval-mode.js";
export * from "./approval-policy.js";
export * from "./approval-prompt.js";
export * from "./call-binding.js";
export * from "./decide.js";
export * from "./decision-metric.js";
export * from "./effective-policy.js";
export * from "./grant-keys.js";
export * from "./hook-payload.js";
export * from "./hook-verdict.js";
export * from "./hooks-file.js";
export * from "./types.js";
