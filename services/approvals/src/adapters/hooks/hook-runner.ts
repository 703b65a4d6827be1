/**
 * The hook-runner port's implementation: every handler that matched runs at once (as in Claude
 * Code), each in a span, and the runs come back in file order for the core to read.
 */
import { withSpan } from "@toolbus/bus";
import type { HookHandler, HookPayload, HookRun } from "../../core/index.js";
import { hookLabel } from "../../core/index.js";
import type { HookRunner } from "../../ports.js";
import { runCommandHook } from "./command-hook.js";
import { runHttpHook } from "./http-hook.js";

export const HOOK_SPAN = "toolbus.approvals.hook";

export interface HookRunnerOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

export function createHookRunner(options: HookRunnerOptions = {}): HookRunner {
  return {
    run(handlers: readonly HookHandler[], payload: HookPayload, signal?: AbortSignal): Promise<HookRun[]> {
      return Promise.all(
        handlers.map((handler) =>
          withSpan(
            HOOK_SPAN,
            {
              "toolbus.hook.event": payload.hook_event_name,
              "toolbus.hook.type": handler.type,
              "toolbus.hook.label": hookLabel(handler),
              ...(payload.tool_use_id === undefined ? {} : { "mcp.call_id": payload.tool_use_id }),
            },
            async (span) => {
              const run =
                handler.type === "command"
                  ? await runCommandHook(handler, payload, { ...options, ...(signal && { signal }) })
                  : await runHttpHook(handler, payload, { ...options, ...(signal && { signal }) });
              span.setAttributes({
                "toolbus.hook.exit_code": run.exitCode ?? -1,
                "toolbus.hook.timed_out": run.timedOut,
              });
              return run;
            },
          ),
        ),
      );
    },
  };
}
