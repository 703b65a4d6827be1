/**
 * `runCli(argv, terminal, signal)`: the command line → the command → an exit code. Usage
 * errors print the usage on stderr (exit 2); a `CliError` prints its message on stderr;
 * anything else is a bug, reported as such (exit 1). The bus is closed on every path.
 */
import {
  ConfigError,
  DEFAULT_NATS_URL,
  type NatsAccess,
  natsAccessFromEnv,
  projectStateDir,
  readSeedFile,
  runningLocalNats,
  seedFileOf,
} from "@toolbus/bus";
import { inboxPrefix, LOCAL_JS_API, prefixFromEnv, TOOLBUS_VERSION } from "@toolbus/protocol";
import { type BusClient, openBusClient } from "./adapters/bus-client.js";
import type { Terminal } from "./adapters/terminal.js";
import { runApprovals } from "./commands/approvals.js";
import { runCall } from "./commands/call.js";
import type { Command, CommandContext } from "./commands/context.js";
import { runNatsConfig } from "./commands/nats-config.js";
import { runProvision } from "./commands/provision.js";
import { runServers } from "./commands/servers.js";
import { runStart } from "./commands/start.js";
import { runTail } from "./commands/tail.js";
import { runTools } from "./commands/tools.js";
import { createPaint, shouldColor } from "./core/ansi.js";
import { type CommandName, findCommand, parseTimeoutSeconds } from "./core/commands.js";
import { ExitCode } from "./core/exit-codes.js";
import { CliError, exitCodeOf, type Failure } from "./core/failure.js";
import { commandHelp, topHelp, usageText } from "./core/help.js";
import { parseArgv } from "./parse-argv.js";

const COMMANDS: Readonly<Record<CommandName, Command>> = {
  start: runStart,
  servers: runServers,
  tools: runTools,
  call: runCall,
  approvals: runApprovals,
  tail: runTail,
  "nats-config": runNatsConfig,
  provision: runProvision,
};

export { DEFAULT_NATS_URL };
/** How long the CLI waits for NATS to accept the connection. */
export const CONNECT_TIMEOUT_MS = 3_000;

export async function runCli(
  argv: readonly string[],
  terminal: Terminal,
  signal: AbortSignal,
): Promise<ExitCode> {
  const parsed = parseArgv(argv);
  switch (parsed.kind) {
    case "help":
      terminal.stdout.write(parsed.command ? commandHelp(parsed.command) : topHelp());
      return ExitCode.ok;
    case "version":
      terminal.stdout.write(`${TOOLBUS_VERSION}\n`);
      return ExitCode.ok;
    case "usage_error":
      return report(terminal, { kind: "usage", message: parsed.message, ...commandOf(parsed.command?.name) });
    case "run":
      break;
  }
  const { command, positionals, options } = parsed;
  let timeoutMs: number | undefined;
  if (typeof options.timeout === "string") {
    const timeout = parseTimeoutSeconds(options.timeout);
    if (!timeout.ok)
      return report(terminal, { kind: "usage", message: timeout.message, command: command.name });
    timeoutMs = timeout.value;
  }
  const json = options.json === true;
  let opened: Promise<BusClient> | undefined;
  const ctx: CommandContext = {
    command,
    positionals,
    options,
    json,
    timeoutMs,
    terminal,
    paint: createPaint(!json && shouldColor(terminal.stdout, terminal.env)),
    paintErr: createPaint(shouldColor(terminal.stderr, terminal.env)),
    signal,
    bus: () => {
      opened ??= openBus(terminal.env);
      return opened;
    },
    now: () => new Date(),
  };
  try {
    return await COMMANDS[command.name](ctx);
  } catch (error) {
    if (error instanceof CliError) return report(terminal, error.failure);
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    terminal.stderr.write(
      `toolbus: unexpected error in toolbus ${command.name}; please report it:\n${detail}\n`,
    );
    return ExitCode.failed;
  } finally {
    if (opened) await opened.then((bus) => bus.close()).catch(() => undefined);
  }
}

async function openBus(env: Readonly<Record<string, string | undefined>>): Promise<BusClient> {
  let prefix: string;
  try {
    prefix = prefixFromEnv(env);
  } catch (error) {
    throw new CliError({ kind: "config", message: error instanceof Error ? error.message : String(error) });
  }
  let access: NatsAccess;
  try {
    access = cliNatsAccess(env, prefix, process.cwd());
  } catch (error) {
    throw new CliError({ kind: "config", message: error instanceof Error ? error.message : String(error) });
  }
  return openBusClient({
    access,
    prefix,
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    env,
  });
}

/**
 * NATS_URL (with NATS_NKEY_FILE or NATS_USER) when set; else the NATS a `toolbus start` runs in
 * this project, with the CLI's identity from the project's private state directory (where
 * `toolbus start` wrote it, outside the checkout); else the default URL.
 */
function cliNatsAccess(
  env: Readonly<Record<string, string | undefined>>,
  prefix: string,
  cwd: string,
): NatsAccess {
  const local = env.NATS_URL ? undefined : runningLocalNats(projectStateDir(cwd, env));
  if (local === undefined) return natsAccessFromEnv(env, { prefix, role: "cli" });
  const file = seedFileOf(local.identitiesDir, "cli");
  try {
    return {
      servers: [local.url],
      nkeySeed: readSeedFile(file, `the CLI's identity ${file}`),
      inboxPrefix: inboxPrefix(prefix, "cli"),
      credentialSource: file,
      jsApiPrefix: LOCAL_JS_API,
      identity: "cli",
    };
  } catch (error) {
    if (error instanceof ConfigError) throw new Error(error.problems.join("; "));
    throw error;
  }
}

function commandOf(name: CommandName | undefined): { command?: string } {
  return name === undefined ? {} : { command: name };
}

/** Prints the failure on stderr (usage errors with the usage) and gives its exit code. */
function report(terminal: Terminal, failure: Failure): ExitCode {
  const paint = createPaint(shouldColor(terminal.stderr, terminal.env));
  terminal.stderr.write(`${paint.red("toolbus:")} ${new CliError(failure).message}\n`);
  if (failure.kind === "usage") {
    terminal.stderr.write(`\n${usageText(failure.command ? findCommand(failure.command) : undefined)}`);
  }
  return exitCodeOf(failure);
}
