/**
 * `toolbus call <tool> [json]`: the typed name resolved against the catalog (`tool-name.ts`),
 * then one `dispatch.call` of that tool's flat name with a fresh callId. While it runs, stderr
 * (on a terminal) shows the tool's progress events and the elapsed time; then stdout gets what
 * the tool answered as text (`--raw`: the raw MCP result; `--json`: the whole reply).
 */
import { randomUUID } from "node:crypto";
import {
  ApprovalRequestSchema,
  ApprovalResolvedEventSchema,
  CallProgressSchema,
  CatalogSnapshotSchema,
  type ToolCallReply,
  ToolCallReplySchema,
  withExposedNames,
} from "@toolbus/protocol";
import type { BusClient } from "../adapters/bus-client.js";
import { DEFAULT_CALL_TIMEOUT_SEC, DEFAULT_TIMEOUT_SEC } from "../core/commands.js";
import { ExitCode, exitCodeForCall } from "../core/exit-codes.js";
import { CliError } from "../core/failure.js";
import { renderCallResult } from "../core/output-body.js";
import {
  APPROVAL_HINT,
  formatProgressLine,
  PROGRESS_TICK_MS,
  type ProgressReport,
} from "../core/progress-line.js";
import { terminalWidth } from "../core/table.js";
import { displayName, resolveToolName } from "../core/tool-name.js";
import { type CommandContext, err, out, printJson, timeoutOr, unlessAborted } from "./context.js";

export async function runCall(ctx: CommandContext): Promise<ExitCode> {
  const [typed = "", args = ""] = ctx.positionals;
  if (typed.trim() === "")
    throw new CliError({ kind: "usage", message: "the tool name is empty", command: "call" });
  const bus = await ctx.bus();
  // The whole catalog, hidden tools too: calling one gets the dispatcher's own refusal.
  const snapshot = await bus.request(bus.subjects.catalogGet, { exposure: "all" }, CatalogSnapshotSchema, {
    timeoutMs: timeoutOr(ctx, DEFAULT_TIMEOUT_SEC),
  });
  const match = resolveToolName(typed, withExposedNames(snapshot.tools));
  if (!match.ok) throw new CliError({ kind: "failed", message: match.message });
  const tool = match.entry.flatName;
  const callId = `cli-${randomUUID()}`;
  const shown = displayName(match.entry);
  const display = ctx.terminal.stderr.isTTY ? startProgressDisplay(ctx, bus, callId, shown) : undefined;
  // Off a terminal there is no display line: a call that waits for a human says so once.
  const stopWatching = watchApproval(bus, callId, (waiting) => {
    if (display) display.setAwaitingApproval(waiting);
    else if (waiting) err(ctx, ctx.paintErr.dim(`toolbus: ${shown} is ${APPROVAL_HINT}`));
  });
  // The display and the watch subscribe before the call is sent, so no event is missed.
  await bus.flush();
  let reply: ToolCallReply;
  try {
    reply = await unlessAborted(
      bus.requestHeld(bus.subjects.dispatchCall, { callId, tool, arguments: args }, ToolCallReplySchema, {
        timeoutMs: timeoutOr(ctx, DEFAULT_CALL_TIMEOUT_SEC),
        timeoutHint: `the call ${callId} may still be running (watch it with \`toolbus tail\`)`,
      }),
      ctx.signal,
      () =>
        new CliError({
          kind: "interrupted",
          message: `interrupted; the call ${callId} may still be running (watch it with \`toolbus tail\`)`,
        }),
    );
  } finally {
    stopWatching();
    display?.stop();
  }
  const code = exitCodeForCall(reply);
  if (ctx.json) printJson(ctx, reply);
  else if (ctx.options.raw === true) printJson(ctx, reply.result ?? { error: reply.error ?? null });
  else if (reply.result) out(ctx, renderCallResult(reply.result));
  if (code !== ExitCode.ok && !ctx.json) err(ctx, ctx.paintErr.red(`toolbus: ${outcomeNote(reply)}`));
  return code;
}

function outcomeNote(reply: ToolCallReply): string {
  switch (reply.status) {
    case "invalid_arguments":
      return "the arguments are not valid JSON; nothing was called";
    case "skipped":
      return `the call was not made: ${reply.error ?? "skipped"}`;
    case "failed":
      return `the call failed${reply.error ? `: ${reply.error}` : ""}`;
    case "completed":
      return "the tool returned an error result";
  }
}

/**
 * Tells `onChange(true)` when an approval request for the call is pending (`approvals.pending`)
 * and `onChange(false)` once it is answered (`approvals.resolved`). Returns unsubscribe.
 */
function watchApproval(bus: BusClient, callId: string, onChange: (waiting: boolean) => void): () => void {
  const pending = bus.subscribe(bus.subjects.approvalsPending, (_subject, body) => {
    if (ApprovalRequestSchema.safeParse(body).data?.callId === callId) onChange(true);
  });
  const resolved = bus.subscribe(bus.subjects.approvalsResolved, (_subject, body) => {
    if (ApprovalResolvedEventSchema.safeParse(body).data?.callId === callId) onChange(false);
  });
  return () => {
    pending();
    resolved();
  };
}

/** Redraws one stderr line every tick with the latest progress event; `stop()` erases it. */
function startProgressDisplay(
  ctx: CommandContext,
  bus: BusClient,
  callId: string,
  tool: string,
): { stop(): void; setAwaitingApproval(waiting: boolean): void } {
  const started = Date.now();
  let report: ProgressReport | undefined;
  let awaitingApproval = false;
  const unsubscribe = bus.subscribe(bus.subjects.callRelayAnyServer(callId, "progress"), (_subject, body) => {
    const parsed = CallProgressSchema.safeParse(body);
    if (parsed.success) {
      const { progress, total, message } = parsed.data;
      report = {
        progress,
        ...(total !== undefined ? { total } : {}),
        ...(message !== undefined ? { message } : {}),
      };
      draw();
    }
  });
  const stderr = ctx.terminal.stderr;
  const draw = () => {
    const line = formatProgressLine({
      tool,
      elapsedMs: Date.now() - started,
      ...(report ? { report } : {}),
      awaitingApproval,
      width: terminalWidth(stderr, ctx.terminal.env, 80),
    });
    stderr.write(`\r\u001b[2K${ctx.paintErr.dim(line)}`);
  };
  const timer = setInterval(draw, PROGRESS_TICK_MS);
  draw();
  return {
    stop() {
      clearInterval(timer);
      unsubscribe();
      stderr.write("\r\u001b[2K");
    },
    setAwaitingApproval(waiting) {
      awaitingApproval = waiting;
      draw();
    },
  };
}
