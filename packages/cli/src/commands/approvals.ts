/**
 * `toolbus approvals`: the pending requests as a table; `approvals answer <id> <choice>`
 * resolves one; `approvals --watch` shows each request as it arrives (`approvals.pending`
 * events, after the ones already waiting) and resolves it with the answer read from stdin.
 */
import {
  type ApprovalChoice,
  type ApprovalRequest,
  ApprovalRequestSchema,
  ApprovalResolvedEventSchema,
  ApprovalResolveResultSchema,
  ApprovalsListResultSchema,
  MAX_APPROVALS_PAGE,
} from "@toolbus/protocol";
import type { BusClient } from "../adapters/bus-client.js";
import { paintStatus } from "../core/ansi.js";
import { offeredChoices, parseApprovalChoice } from "../core/approval-choice.js";
import { ApprovalQueue } from "../core/approval-queue.js";
import { APPROVAL_COLUMNS, approvalRows, renderApprovalPrompt } from "../core/approval-view.js";
import { approvalsAction } from "../core/approvals-args.js";
import { AsyncQueue } from "../core/async-queue.js";
import { DEFAULT_TIMEOUT_SEC } from "../core/commands.js";
import { ExitCode } from "../core/exit-codes.js";
import { CliError } from "../core/failure.js";
import { renderTable, tableWidth } from "../core/table.js";
import { type CommandContext, err, out, printJson, timeoutOr } from "./context.js";

export async function runApprovals(ctx: CommandContext): Promise<ExitCode> {
  const action = approvalsAction(ctx.positionals, ctx.options.watch === true);
  if (!action.ok) throw new CliError({ kind: "usage", message: action.message, command: "approvals" });
  const bus = await ctx.bus();
  switch (action.value.kind) {
    case "list":
      return list(ctx, bus);
    case "answer": {
      const { requestId, choice } = action.value;
      const decision = await resolve(ctx, bus, requestId, choice);
      if (ctx.json) printJson(ctx, { requestId, choice, decision });
      else out(ctx, `${requestId}: ${paintStatus(ctx.paint, decision)}`);
      return ExitCode.ok;
    }
    case "watch":
      return watch(ctx, bus);
  }
}

/** Every pending request: the list is paged, so the pages are read one after another. */
async function allPending(ctx: CommandContext, bus: BusClient): Promise<ApprovalRequest[]> {
  const pending: ApprovalRequest[] = [];
  let cursor: string | undefined;
  do {
    const page = await bus.request(
      bus.subjects.approvalsList,
      { limit: MAX_APPROVALS_PAGE, ...(cursor !== undefined ? { cursor } : {}) },
      ApprovalsListResultSchema,
      { timeoutMs: timeoutOr(ctx, DEFAULT_TIMEOUT_SEC) },
    );
    pending.push(...page.pending);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pending;
}

async function list(ctx: CommandContext, bus: BusClient): Promise<ExitCode> {
  const pending = await allPending(ctx, bus);
  if (ctx.json) {
    printJson(ctx, pending);
    return ExitCode.ok;
  }
  if (pending.length === 0) {
    out(ctx, "No approval requests are pending.");
    return ExitCode.ok;
  }
  out(
    ctx,
    ...renderTable(APPROVAL_COLUMNS, approvalRows(pending, ctx.now()), {
      maxWidth: tableWidth(ctx.terminal.stdout, ctx.terminal.env),
      paintHeader: ctx.paint.bold,
    }),
  );
  return ExitCode.ok;
}

async function resolve(ctx: CommandContext, bus: BusClient, requestId: string, choice: ApprovalChoice) {
  const result = await bus.request(
    bus.subjects.approvalsResolve,
    { requestId, choice },
    ApprovalResolveResultSchema,
    {
      timeoutMs: timeoutOr(ctx, DEFAULT_TIMEOUT_SEC),
    },
  );
  return result.decision;
}

type WatchInput =
  | { kind: "pending"; request: ApprovalRequest }
  | { kind: "resolved"; requestId: string; decision: string; by: string }
  | { kind: "line"; text: string }
  | { kind: "end" };

/**
 * One request at a time: shown with its choices, answered by the next valid line. A request
 * answered elsewhere (another terminal, the inbox page, its expiry) is dropped with a note.
 * Ends when stdin closes or on Ctrl-C.
 */
async function watch(ctx: CommandContext, bus: BusClient): Promise<ExitCode> {
  const inputs = new AsyncQueue<WatchInput>();
  const queue = new ApprovalQueue();
  // Prompts and notes go to stderr under --json, so stdout stays JSON lines.
  const say = (line: string) => (ctx.json ? err(ctx, line) : out(ctx, line));
  const paint = ctx.json ? ctx.paintErr : ctx.paint;

  bus.subscribe(bus.subjects.approvalsPending, (_subject, body) => {
    const parsed = ApprovalRequestSchema.safeParse(body);
    if (parsed.success) inputs.push({ kind: "pending", request: parsed.data });
  });
  bus.subscribe(bus.subjects.approvalsResolved, (_subject, body) => {
    const parsed = ApprovalResolvedEventSchema.safeParse(body);
    if (parsed.success) inputs.push({ kind: "resolved", ...parsed.data });
  });
  await bus.flush();
  const pending = await allPending(ctx, bus);
  for (const request of pending) {
    if (queue.add(request) && ctx.json) emit(ctx, { event: "pending", request });
  }
  const lines = ctx.terminal.readLines(
    (text) => inputs.push({ kind: "line", text }),
    () => inputs.push({ kind: "end" }),
  );
  ctx.signal.addEventListener("abort", () => inputs.push({ kind: "end" }), { once: true });

  let current: { request: ApprovalRequest; offered: ApprovalChoice[] } | undefined;
  let waitingShown = false;
  try {
    for (;;) {
      if (!current) {
        const next = queue.next();
        if (next) {
          current = { request: next, offered: offeredChoices(next) };
          waitingShown = false;
          say("");
          for (const line of renderApprovalPrompt(next, current.offered, ctx.now(), paint)) say(line);
          prompt(ctx);
        } else if (!waitingShown) {
          waitingShown = true;
          err(ctx, ctx.paintErr.dim("Waiting for approval requests (Ctrl-C or end of input to stop)..."));
        }
      }
      const input = await inputs.next();
      switch (input.kind) {
        case "pending":
          if (queue.add(input.request) && ctx.json) emit(ctx, { event: "pending", request: input.request });
          break;
        case "resolved":
          queue.remove(input.requestId);
          if (current?.request.requestId === input.requestId) {
            say(
              `${input.requestId} was answered elsewhere: ${paintStatus(paint, input.decision)} (by ${input.by})`,
            );
            current = undefined;
          }
          break;
        case "line": {
          if (!current) {
            if (input.text.trim() !== "") err(ctx, "Nothing is waiting for an answer yet.");
            break;
          }
          if (input.text.trim() === "") {
            prompt(ctx);
            break;
          }
          const choice = parseApprovalChoice(input.text, current.offered);
          if (!choice.ok) {
            err(ctx, choice.message);
            prompt(ctx);
            break;
          }
          const { requestId } = current.request;
          queue.remove(requestId);
          current = undefined;
          try {
            const decision = await resolve(ctx, bus, requestId, choice.value);
            if (ctx.json) emit(ctx, { event: "answered", requestId, choice: choice.value, decision });
            else say(`${requestId}: ${paintStatus(paint, decision)}`);
          } catch (error) {
            // An expired or already answered request is the service's bad_request: say so, go on.
            if (error instanceof CliError && error.failure.kind === "request_failed") err(ctx, error.message);
            else throw error;
          }
          break;
        }
        case "end":
          return ExitCode.ok;
      }
    }
  } finally {
    lines.close();
  }
}

function prompt(ctx: CommandContext): void {
  ctx.terminal.stderr.write("choice> ");
}

function emit(ctx: CommandContext, value: unknown): void {
  ctx.terminal.stdout.write(`${JSON.stringify(value)}\n`);
}
