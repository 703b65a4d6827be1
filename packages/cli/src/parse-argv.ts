/**
 * The command line → what to run, with node's `parseArgs` and the command table: the first
 * word that is not an option is the command; global options may come before or after it;
 * every option is checked against the command's (unknown ones are usage errors).
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import {
  type CommandSpec,
  checkPositionals,
  findCommand,
  GLOBAL_OPTIONS,
  type OptionSpec,
  type OptionValues,
  VERSION_OPTION,
} from "./core/commands.js";

export type ParsedArgv =
  | { kind: "help"; command?: CommandSpec }
  | { kind: "version" }
  | { kind: "run"; command: CommandSpec; positionals: string[]; options: OptionValues }
  | { kind: "usage_error"; message: string; command?: CommandSpec };

type ParseOptions = NonNullable<ParseArgsConfig["options"]>;

function toParseOptions(specs: readonly OptionSpec[]): ParseOptions {
  const options: ParseOptions = {};
  for (const spec of specs) {
    options[spec.name] = spec.short ? { type: spec.type, short: spec.short } : { type: spec.type };
  }
  return options;
}

export function parseArgv(argv: readonly string[]): ParsedArgv {
  // A loose pass only to find the command; `--timeout 5` must not make `5` the command.
  const loose = parseArgs({
    args: [...argv],
    options: toParseOptions([...GLOBAL_OPTIONS, VERSION_OPTION]),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const commandToken = loose.tokens.find((t) => t.kind === "positional");
  if (!commandToken) {
    return strictTopLevel(argv);
  }
  const name = commandToken.value;
  const rest = argv.filter((_, i) => i !== commandToken.index);
  if (name === "help") {
    const topic = rest.find((arg) => !arg.startsWith("-"));
    if (topic === undefined) return { kind: "help" };
    const command = findCommand(topic);
    return command ? { kind: "help", command } : unknownCommand(topic);
  }
  const command = findCommand(name);
  if (!command) return unknownCommand(name);

  let parsed: { values: Record<string, string | boolean | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: rest,
      options: toParseOptions([...command.options, ...GLOBAL_OPTIONS]),
      strict: true,
      allowPositionals: true,
    }) as typeof parsed;
  } catch (error) {
    return { kind: "usage_error", message: parseErrorMessage(error, command), command };
  }
  if (parsed.values.help === true) return { kind: "help", command };
  const positionals = checkPositionals(command, parsed.positionals);
  if (!positionals.ok) return { kind: "usage_error", message: positionals.message, command };
  return { kind: "run", command, positionals: positionals.value, options: parsed.values };
}

/** No command word: `--help`, `--version`, or a usage error. */
function strictTopLevel(argv: readonly string[]): ParsedArgv {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: toParseOptions([...GLOBAL_OPTIONS, VERSION_OPTION]),
      strict: true,
      allowPositionals: false,
    });
    if (values.help === true) return { kind: "help" };
    if (values.version === true) return { kind: "version" };
  } catch (error) {
    return { kind: "usage_error", message: parseErrorMessage(error, undefined) };
  }
  return { kind: "usage_error", message: "no command given" };
}

function unknownCommand(name: string): ParsedArgv {
  return { kind: "usage_error", message: `unknown command ${JSON.stringify(name)}` };
}

/** node's message, first sentence only (its advice about `--` rarely applies), with the command. */
function parseErrorMessage(error: unknown, command: CommandSpec | undefined): string {
  const text = error instanceof Error ? error.message : String(error);
  const first = text.split(/\.\s/)[0]?.replace(/\.$/, "") ?? text;
  return command ? `${first} for toolbus ${command.name}` : first;
}
