/**
 * Where a model can reach a tool (docs/reference-behavior.md §3.6): directly in its tool list,
 * deferred behind tool search, and/or from code mode, after `omit_tools_from`.
 */

export const ExposureSurface = { direct: "direct", deferred: "deferred", codeMode: "code_mode" } as const;
export type ExposureSurface = (typeof ExposureSurface)[keyof typeof ExposureSurface];

export const ExposureKind = {
  hidden: "hidden",
  codeModeOnly: "code_mode_only",
  directModelOnly: "direct_model_only",
  direct: "direct",
  deferredModelOnly: "deferred_model_only",
  deferred: "deferred",
} as const;
export type ExposureKind = (typeof ExposureKind)[keyof typeof ExposureKind];

export interface ExposureInput {
  /** The model supports tool search and the provider supports namespaces. */
  readonly searchEnabled: boolean;
  readonly omitToolsFrom?: readonly ExposureSurface[] | undefined;
  /** The namespace is listed in `direct_only_tool_namespaces`: no deferred, no code mode. */
  readonly directOnly?: boolean | undefined;
}

export function exposureFor(input: ExposureInput): ExposureKind {
  const omitted = new Set<ExposureSurface>(input.omitToolsFrom ?? []);
  if (input.directOnly === true) {
    omitted.add("deferred");
    omitted.add("code_mode");
  }
  const codeMode = !omitted.has("code_mode");
  // Search on and deferred still offered: deferred wins over direct; otherwise direct only.
  const deferred = input.searchEnabled && !omitted.has("deferred");
  const direct = !deferred && !omitted.has("direct");
  if (deferred) return codeMode ? "deferred" : "deferred_model_only";
  if (direct) return codeMode ? "direct" : "direct_model_only";
  return codeMode ? "code_mode_only" : "hidden";
}
