/**
 * How one hook handler's run is reported to the core, whatever ran it, and the parts of reading it
 * that every event shares: the fail-closed reasons and the JSON a hook may print on stdout.
 *
 * An HTTP hook maps onto the same shape: a 2xx answer is exit code 0 with the body as stdout, any
 * other status is that status as a (non-blocking) exit code, and a request that could not be made
 * at all is `crashed`.
 */
import { formatZodIssues, type JsonValue } from "@toolbus/protocol";
import { z } from "zod";
import { formatSeconds } from "./format-seconds.js";

export interface HookRun {
  /** The handler's command line or URL (`hookLabel`). */
  hookLabel: string;
  /** null when the process was killed or never started. */
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  crashed: boolean;
  /** Why the hook could not run, when it crashed. */
  error?: string;
  /** The timeout the runner applied, for the message. */
  timeoutMs: number;
}

/** A hook that did not finish is a "no" (fail closed); the reason names the hook. */
export function failureReason(run: HookRun): string | undefined {
  if (run.timedOut) return `hook "${run.hookLabel}" timed out after ${formatSeconds(run.timeoutMs)}`;
  if (run.crashed) {
    return run.error === undefined || run.error === ""
      ? `hook "${run.hookLabel}" failed to run`
      : `hook "${run.hookLabel}" failed to run: ${run.error}`;
  }
  return undefined;
}

/** Exit code 2 blocks, with stderr as the reason (or a default naming the hook). */
export function blockingReason(run: HookRun, fallback: string): string | undefined {
  if (run.exitCode !== 2) return undefined;
  const stderr = run.stderr.trim();
  return stderr === "" ? fallback : stderr;
}

const HookSpecificOutputSchema = z.object({
  hookEventName: z.string().optional(),
  permissionDecision: z.string().optional(),
  permissionDecisionReason: z.string().optional(),
  updatedInput: z.unknown().optional(),
  decision: z
    .object({
      behavior: z.string(),
      message: z.string().optional(),
      updatedInput: z.unknown().optional(),
    })
    .optional(),
});

/** Every field toolbus reads from a hook's JSON output; the rest is dropped. */
export const HookJsonOutputSchema = z.object({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  decision: z.string().optional(),
  reason: z.string().optional(),
  hookSpecificOutput: HookSpecificOutputSchema.optional(),
});
export type HookJsonOutput = z.infer<typeof HookJsonOutputSchema>;

export type HookStdout =
  | { kind: "json"; output: HookJsonOutput }
  | { kind: "text" }
  | { kind: "invalid"; warning: string };

/** Only an exit-0 stdout that looks like a JSON object is read as a hook's decision. */
export function readHookStdout(run: HookRun): HookStdout {
  const text = run.stdout.trim();
  if (!text.startsWith("{")) return { kind: "text" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return {
      kind: "invalid",
      warning: `hook "${run.hookLabel}" printed invalid JSON (${why}); its output was ignored`,
    };
  }
  const parsed = HookJsonOutputSchema.safeParse(value);
  if (!parsed.success) {
    return {
      kind: "invalid",
      warning: `hook "${run.hookLabel}" printed JSON that is not a hook output (${formatZodIssues(parsed.error)}); its output was ignored`,
    };
  }
  return { kind: "json", output: parsed.data };
}

/** A JSON object: what a hook's `updatedInput` must be. */
export type JsonRecord = { [key: string]: JsonValue };

// Only ever given values that came out of JSON.parse, so an object is a JSON object.
export function isJsonObject(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Why a command hook never started: every slot stayed busy for as long as its timeout allowed. */
export function noHookSlotError(limit: number, timeoutMs: number): string {
  return (
    `toolbus did not start it: all ${limit} command hook slots (\`[approvals] max_concurrent_hooks\`) ` +
    `stayed busy for its whole ${formatSeconds(timeoutMs)} timeout; raise the limit or make the hooks faster`
  );
}
