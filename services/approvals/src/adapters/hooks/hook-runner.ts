/**
 * The hook-runner port's implementation: every handler that matched runs at once (as in Claude
 * Code), each in a span, and the runs come back in file order for the core to read. Command
 * hooks take a slot of the service-wide limit first (hook-slots.ts). A span names the hook's
 * event and type but never its command or URL, which may carry secrets.
 */
import { withSpan } from "@toolbus/bus";
import { DEFAULT_MAX_CONCURRENT_HOOKS } from "@toolbus/config";
import type { CommandHook, HookHandler, HookPayload } from "@toolbus/policy";
import { hookTimeoutMs } from "@toolbus/policy";
import type { HookRun } from "../../core/index.js";
import { noHookSlotError } from "../../core/index.js";
import type { HookRunner } from "../../ports.js";
import { runCommandHook } from "./command-hook.js";
import { HookSlots } from "./hook-slots.js";
import { runHttpHook } from "./http-hook.js";

export const HOOK_SPAN = "toolbus.approvals.hook";

export interface HookRunnerOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** The most command hooks running at once across the service (`[approvals] max_concurrent_hooks`). */
  maxConcurrentHooks?: number;
}

export function createHookRunner(options: HookRunnerOptions = {}): HookRunner {
  const { maxConcurrentHooks = DEFAULT_MAX_CONCURRENT_HOOKS, ...hookOptions } = options;
  const slots = new HookSlots(maxConcurrentHooks);

  async function runCommand(
    handler: CommandHook,
    payload: HookPayload,
    signal?: AbortSignal,
  ): Promise<HookRun> {
    const timeoutMs = hookTimeoutMs(handler);
    const waitStarted = performance.now();
    const release = await slots.acquire(timeoutMs, signal);
    if (release === undefined) {
      return {
        hookLabel: handler.command,
        timeoutMs,
        exitCode: null,
        stdout: "",
        stderr: "",
        timedOut: false,
        crashed: true,
        error: signal?.aborted
          ? "the approvals service stopped before the hook started"
          : noHookSlotError(slots.limit, timeoutMs),
      };
    }
    try {
      const killAfterMs = Math.max(0, timeoutMs - (performance.now() - waitStarted));
      return await runCommandHook(handler, payload, {
        ...hookOptions,
        killAfterMs,
        ...(signal && { signal }),
      });
    } finally {
      release();
    }
  }

  return {
    run(handlers: readonly HookHandler[], payload: HookPayload, signal?: AbortSignal): Promise<HookRun[]> {
      return Promise.all(
        handlers.map((handler) =>
          withSpan(
            HOOK_SPAN,
            {
              "toolbus.hook.event": payload.hook_event_name,
              "toolbus.hook.type": handler.type,
              ...(payload.tool_use_id === undefined ? {} : { "mcp.call_id": payload.tool_use_id }),
            },
            async (span) => {
              const run =
                handler.type === "command"
                  ? await runCommand(handler, payload, signal)
                  : await runHttpHook(handler, payload, { ...hookOptions, ...(signal && { signal }) });
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
