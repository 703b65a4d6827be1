/**
 * `toolbus tail`: every event the CLI's role may see — calls' begin and end, server status,
 * startup, catalog and prompts changes, and the approvals' pending/resolved events — one line
 * each as they arrive (`--json`: one JSON object per line), until Ctrl-C or `--count` events.
 * The subjects are the role's own (the access tables), not `<prefix>.events.>`, which an
 * enforcing NATS refuses it; a subscription NATS refuses anyway ends the command with an error.
 */
import {
  CatalogSnapshotSchema,
  covers,
  identityOf,
  identityUse,
  type Subjects,
  withExposedNames,
} from "@toolbus/protocol";
import type { BusClient } from "../adapters/bus-client.js";
import { DEFAULT_TIMEOUT_SEC, parseCount } from "../core/commands.js";
import { describeEvent, eventJsonLine, formatEventLine, type ToolNamer } from "../core/event-line.js";
import { ExitCode } from "../core/exit-codes.js";
import { CliError } from "../core/failure.js";
import { aborted, type CommandContext, err, out } from "./context.js";

/** What `toolbus tail` follows: the CLI role's event subjects, a call's own relays left out. */
export function tailSubjects(subjects: Subjects): string[] {
  const relays = subjects.callRelayEvery("progress");
  return identityUse(identityOf("cli"), subjects).subscribes.filter((subject) => !covers(relays, subject));
}

export async function runTail(ctx: CommandContext): Promise<ExitCode> {
  const countOption = ctx.options.count;
  const count = typeof countOption === "string" ? parseCount("count", countOption) : undefined;
  if (count && !count.ok) throw new CliError({ kind: "usage", message: count.message, command: "tail" });
  const limit = count?.ok ? count.value : Number.POSITIVE_INFINITY;

  const bus = await ctx.bus();
  const prefix = bus.subjects.prefix;
  const names = new ToolNames(bus);
  await names.load();
  const done = new AbortController();
  let seen = 0;
  const print = (subject: string, body: unknown) => {
    if (seen >= limit) return;
    seen += 1;
    const event = { subject, body, receivedAt: ctx.now() };
    out(
      ctx,
      ctx.json
        ? eventJsonLine(prefix, event)
        : formatEventLine(describeEvent(prefix, event, names.namer), ctx.paint),
    );
    if (subject === bus.subjects.catalogEvent) void names.load();
    if (seen >= limit) done.abort();
  };
  const subjects = tailSubjects(bus.subjects);
  let refused: string | undefined;
  const onRefused = (reason: string) => {
    refused ??= reason;
    done.abort();
  };
  const unsubscribe = subjects.map((subject) => bus.subscribe(subject, print, onRefused));
  // NATS answers every subscription before the flush's PONG: a refusal is known here.
  await bus.flush();
  if (refused !== undefined) throw tailRefused(refused);
  // Scripts and tests wait for this line before they make the events they want to see.
  err(ctx, ctx.paintErr.dim(`Listening on ${subjects.join(", ")} (Ctrl-C to stop)`));
  await Promise.race([aborted(ctx.signal), aborted(done.signal)]);
  for (const stop of unsubscribe) stop();
  if (refused !== undefined) throw tailRefused(refused);
  return ExitCode.ok;
}

function tailRefused(reason: string): CliError {
  return new CliError({
    kind: "failed",
    message: `NATS refused to let this identity follow events (${reason}); use the CLI's own identity (cli.nk, written by toolbus nats-config)`,
  });
}

/**
 * Tools by the name MCP clients see (`withExposedNames` over the model view), read from the
 * catalog at start and again when it changes; a tool it does not know is shown as `server/tool`.
 */
class ToolNames {
  #names = new Map<string, string>();
  readonly #bus: BusClient;

  constructor(bus: BusClient) {
    this.#bus = bus;
  }

  readonly namer: ToolNamer = (server, tool) =>
    this.#names.get(`${server}\u0000${tool}`) ?? `${server}/${tool}`;

  async load(): Promise<void> {
    try {
      const { tools } = await this.#bus.request(
        this.#bus.subjects.catalogGet,
        { exposure: "model" },
        CatalogSnapshotSchema,
        { timeoutMs: DEFAULT_TIMEOUT_SEC * 1000 },
      );
      this.#names = new Map(
        withExposedNames(tools).flatMap((entry) =>
          entry.exposedName === undefined
            ? []
            : [[`${entry.server}\u0000${entry.rawName}`, entry.exposedName]],
        ),
      );
    } catch {
      // Without the catalog, calls are shown as server/tool.
    }
  }
}
