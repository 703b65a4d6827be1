/** The `toolbus` process: argv → runCli → exit code. Ctrl-C stops the command; a second one exits at once. */
import { ignoreBrokenPipes, onStopSignals } from "@toolbus/bus";
import { processTerminal } from "./adapters/terminal.js";
import { runCli } from "./cli.js";
import { ExitCode } from "./core/exit-codes.js";

ignoreBrokenPipes();
const stop = new AbortController();
onStopSignals({ stop: () => stop.abort(), force: () => process.exit(ExitCode.interrupted) });

const terminal = processTerminal();
const code = await runCli(process.argv.slice(2), terminal, stop.signal);
await terminal.flush();
// Nothing the CLI opened may keep the process alive past its answer (stdin, a late connection).
process.exit(code);
