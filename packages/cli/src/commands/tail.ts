/**
 * `toolbus tail`: every event under `<prefix>.events.>` (calls, server status, startup,
 * catalog) and the approvals' pending/resolved events, one line each as they arrive
 * (`--json`: one JSON object per line), until Ctrl-C or `--count` events.
 */
import { parseCount } from "../core/commands.js";
import { describeEvent, eventJsonLine, formatEventLine } from "../core/event-line.js";
import { ExitCode } from "../core/exit-codes.js";
import { CliError } from "../core/failure.js";
import { aborted, type CommandContext, err, out } from "./context.js";

export async function runTail(ctx: CommandContext): Promise<ExitCode> {
  const countOption = ctx.options.count;
  const count = typeof countOption === "string" ? parseCount("count", countOption) : undefined;
  if (count && !count.ok) throw new CliError({ kind: "usage", message: count.message, command: "tail" });
  const limit = count?.ok ? count.value : Number.POSITIVE_INFINITY;

  const bus = await ctx.bus();
  const prefix = bus.subjects.prefix;
  const done = new AbortController();
  let seen = 0;
  const print = (subject: string, body: unknown) => {
    if (seen >= limit) return;
    seen += 1;
    const event = { subject, body, receivedAt: ctx.now() };
    out(
      ctx,
      ctx.json ? eventJsonLine(prefix, event) : formatEventLine(describeEvent(prefix, event), ctx.paint),
    );
    if (seen >= limit) done.abort();
  };
  const subjects = [bus.subjects.events, bus.subjects.approvalsPending, bus.subjects.approvalsResolved];
  const unsubscribe = subjects.map((subject) => bus.subscribe(subject, print));
  await bus.flush();
  // Scripts and tests wait for this line before they make the events they want to see.
  err(ctx, ctx.paintErr.dim(`Listening on ${subjects.join(", ")} (Ctrl-C to stop)`));
  await Promise.race([aborted(ctx.signal), aborted(done.signal)]);
  for (const stop of unsubscribe) stop();
  return ExitCode.ok;
}
