// Citation text as a model writes it (docs/reference-behavior.md §9 "Format the model is told to emit"), for tests.

export const A = "019c6e27-e55b-73d1-87d8-4e01f1f75043";
export const B = "019c6e27-e55b-73d1-87d8-4e01f1f75044";
export const C = "019c6e27-e55b-73d1-87d8-4e01f1f75045";
export const MISSING = "019c6e27-e55b-73d1-87d8-4e01f1f7504f";

/** One citation span naming `ids` in a `<rollout_ids>` block (or the legacy `<thread_ids>`). */
export function citation(
  ids: readonly string[],
  block: "rollout_ids" | "thread_ids" = "rollout_ids",
): string {
  return [
    "<oai-mem-citation>",
    "<citation_entries>",
    "MEMORY.md:1-2|note=[x]",
    "</citation_entries>",
    `<${block}>`,
    ...ids,
    `</${block}>`,
    "</oai-mem-citation>",
  ].join("\n");
}

/** An answer with a citation at its end, as the model is told to write it. */
export function answer(ids: readonly string[], block: "rollout_ids" | "thread_ids" = "rollout_ids"): string {
  return `Here is the answer.\n${citation(ids, block)}`;
}
