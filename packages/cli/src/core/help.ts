/** The help and usage text, rendered from the command table. */
import { COMMANDS, type CommandSpec, GLOBAL_OPTIONS, type OptionSpec, VERSION_OPTION } from "./commands.js";

const ENVIRONMENT: readonly [string, string][] = [
  [
    "NATS_URL",
    "The NATS server toolbus runs on (default: the one `toolbus start` runs in this folder, else nats://127.0.0.1:4222)",
  ],
  ["NATS_NKEY_FILE", "The CLI's identity on an authenticated bus (cli.nk from `toolbus nats-config`)"],
  ["TOOLBUS_PREFIX", "The subject prefix of the toolbus to talk to (default toolbus)"],
  ["NO_COLOR", "No colors, even on a terminal"],
];

const EXIT_CODES =
  "0 success, 1 the tool or the request failed, 2 usage error, 3 toolbus unreachable, 4 invalid tool arguments";

export function topHelp(): string {
  const commands = COMMANDS.map((c): [string, string] => [c.usage[0] ?? c.name, c.summary]);
  return [
    "toolbus: servers, tools, calls, approvals and live events of a toolbus, from a terminal.",
    "",
    "Usage: toolbus <command> [options]",
    "",
    "Commands:",
    ...twoColumns(commands),
    "",
    "Options:",
    ...twoColumns([...GLOBAL_OPTIONS, VERSION_OPTION].map(optionRow)),
    "",
    "Environment:",
    ...twoColumns(ENVIRONMENT),
    "",
    `Exit codes: ${EXIT_CODES}.`,
    "Run `toolbus <command> --help` for a command's details.",
    "",
  ].join("\n");
}

export function commandHelp(command: CommandSpec): string {
  const args = command.positionals.map((p): [string, string] => [
    displayName(p.name, p.arity),
    p.description,
  ]);
  return [
    ...usageLines(command),
    "",
    `${command.summary}.`,
    ...command.details.map((line) => `  ${line}`),
    ...(args.length > 0 ? ["", "Arguments:", ...twoColumns(args)] : []),
    "",
    "Options:",
    ...twoColumns([...command.options, ...GLOBAL_OPTIONS].map(optionRow)),
    "",
  ].join("\n");
}

/** What a usage error prints after its message. */
export function usageText(command: CommandSpec | undefined): string {
  if (!command) {
    return ["Usage: toolbus <command> [options]", "Run `toolbus --help` for the commands.", ""].join("\n");
  }
  return [...usageLines(command), `Run \`toolbus ${command.name} --help\` for details.`, ""].join("\n");
}

function usageLines(command: CommandSpec): string[] {
  return command.usage.map((form, i) => `${i === 0 ? "Usage: " : "       "}toolbus ${form} [options]`);
}

function displayName(name: string, arity: "required" | "optional" | "rest"): string {
  if (name.includes(" ")) return name;
  if (arity === "required") return `<${name}>`;
  return arity === "rest" ? `[${name}...]` : `[${name}]`;
}

function optionRow(option: OptionSpec): [string, string] {
  const long = `--${option.name}${option.valueName ? ` <${option.valueName}>` : ""}`;
  return [option.short ? `-${option.short}, ${long}` : `    ${long}`, option.description];
}

function twoColumns(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}
