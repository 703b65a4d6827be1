/**
 * The hooks file (`[approvals] hooks`), in Claude Code's shape: its schema, and which handlers a
 * hook name selects for an event. Accepts `{hooks:{PreToolUse:[…]}}` (a Claude Code settings file)
 * and the bare `{PreToolUse:[…]}`. Events toolbus does not run (Stop, SessionStart, …) are ignored.
 */
import { parseWith } from "@toolbus/protocol";
import { z } from "zod";

export const HOOK_EVENTS = ["PreToolUse", "PermissionRequest", "PostToolUse"] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

/** Claude Code's default for command hooks. */
export const DEFAULT_HOOK_TIMEOUT_SEC = 600;

const timeout = z.number().positive().optional();

export const CommandHookSchema = z.object({
  type: z.literal("command"),
  command: z.string().min(1),
  timeout,
});

export const HttpHookSchema = z.object({
  type: z.literal("http"),
  url: z.url(),
  timeout,
  headers: z.record(z.string(), z.string()).optional(),
  allowedEnvVars: z.array(z.string()).optional(),
});

export const HookHandlerSchema = z.discriminatedUnion("type", [CommandHookSchema, HttpHookSchema], {
  error: (issue) => {
    if (issue.code !== "invalid_union") return undefined;
    const type =
      typeof issue.input === "object" && issue.input !== null ? Reflect.get(issue.input, "type") : undefined;
    const given = type === undefined ? "is missing" : `${JSON.stringify(type)} is not supported`;
    return `hook type ${given}; use "command" or "http" (toolbus runs no prompt, agent or mcp_tool hooks)`;
  },
});

export const MatcherGroupSchema = z.object({
  matcher: z
    .string()
    .optional()
    .superRefine((matcher, ctx) => {
      const problem = matcher === undefined ? undefined : matcherProblem(matcher);
      if (problem !== undefined) {
        ctx.addIssue({ code: "custom", message: `invalid matcher "${matcher}": ${problem}` });
      }
    }),
  hooks: z.array(HookHandlerSchema),
});

export const HookEventsSchema = z.object({
  PreToolUse: z.array(MatcherGroupSchema).default([]),
  PermissionRequest: z.array(MatcherGroupSchema).default([]),
  PostToolUse: z.array(MatcherGroupSchema).default([]),
});

/** The wrapped form, as in a Claude Code settings file. */
export const HooksFileSchema = z.object({ hooks: HookEventsSchema });

export type CommandHook = z.infer<typeof CommandHookSchema>;
export type HttpHook = z.infer<typeof HttpHookSchema>;
export type HookHandler = z.infer<typeof HookHandlerSchema>;
export type MatcherGroup = z.infer<typeof MatcherGroupSchema>;
export type HooksConfig = z.infer<typeof HookEventsSchema>;

export const NO_HOOKS: HooksConfig = { PreToolUse: [], PermissionRequest: [], PostToolUse: [] };

/**
 * Parses either form into one `HooksConfig`. On failure the message names every bad field by its
 * path in the file (`hooks.PreToolUse.0.matcher: invalid matcher "mcp__(": …`).
 */
export function parseHooksFile(
  value: unknown,
): { ok: true; value: HooksConfig } | { ok: false; message: string } {
  const wrapped = typeof value === "object" && value !== null && "hooks" in value;
  if (!wrapped) return parseWith(HookEventsSchema, value);
  const parsed = parseWith(HooksFileSchema, value);
  return parsed.ok ? { ok: true, value: parsed.value.hooks } : parsed;
}

/**
 * The handlers to run for `event` on `hookName`, in file order, each distinct handler once.
 * A matcher is a regular expression over the whole hook name; `*`, `""` or none matches all.
 */
export function matchingHooks(config: HooksConfig, event: HookEvent, hookName: string): HookHandler[] {
  if (config[event].length === 0) return [];
  const selected: HookHandler[] = [];
  const seen = new Set<string>();
  for (const group of config[event]) {
    if (!matcherMatches(group.matcher, hookName)) continue;
    for (const handler of group.hooks) {
      const identity = JSON.stringify([handler.type, hookLabel(handler)]);
      if (seen.has(identity)) continue;
      seen.add(identity);
      selected.push(handler);
    }
  }
  return selected;
}

/** How messages and logs name a handler: its command line, or its URL. */
export function hookLabel(handler: HookHandler): string {
  return handler.type === "command" ? handler.command : handler.url;
}

export function hookTimeoutMs(handler: HookHandler): number {
  return (handler.timeout ?? DEFAULT_HOOK_TIMEOUT_SEC) * 1000;
}

function matcherMatches(matcher: string | undefined, hookName: string): boolean {
  if (matcher === undefined || matcher === "" || matcher === "*") return true;
  return compiledMatcher(matcher).test(hookName);
}

// Matchers are few and fixed per file; compiling each once keeps matching off the hot path.
const compiled = new Map<string, RegExp>();

function compiledMatcher(matcher: string): RegExp {
  let regex = compiled.get(matcher);
  if (regex === undefined) {
    regex = new RegExp(`^(?:${matcher})$`);
    compiled.set(matcher, regex);
  }
  return regex;
}

function matcherProblem(matcher: string): string | undefined {
  if (matcher === "" || matcher === "*") return undefined;
  // Checked on its own: a fragment like `a)|(.*` is only valid once wrapped, and would then escape the anchors.
  try {
    new RegExp(matcher);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
