/** @toolbus/cli: the `toolbus` command line, for embedding (the all-in-one runner, tests). */
export { type OutputStream, processTerminal, type Terminal } from "./adapters/terminal.js";
export { CONNECT_TIMEOUT_MS, DEFAULT_NATS_URL, runCli } from "./cli.js";
export type { AllInOneOptions, RunAllInOne } from "./commands/start.js";
export { COMMANDS, type CommandName, type CommandSpec } from "./core/commands.js";
export { ExitCode, exitCodeForCall } from "./core/exit-codes.js";
