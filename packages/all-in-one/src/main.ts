/** `pnpm start`: runs toolbus in one process until Ctrl-C; a second one exits at once. */
import { parseArgs } from "node:util";
import { ignoreBrokenPipes, onStopSignals } from "@toolbus/bus";
import { runAllInOne } from "./run.js";

const { values } = parseArgs({
  options: { config: { type: "string" }, "log-format": { type: "string" } },
  strict: true,
});
ignoreBrokenPipes();
const stop = new AbortController();
onStopSignals({ stop: () => stop.abort(), force: () => process.exit(1) });
process.exitCode = await runAllInOne({
  ...(values.config ? { configPath: values.config } : {}),
  ...(values["log-format"] ? { logFormat: values["log-format"] } : {}),
  env: process.env,
  signal: stop.signal,
});
process.exit();
