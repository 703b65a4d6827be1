/** `pnpm start`: runs toolbus in one process until Ctrl-C. */
import { parseArgs } from "node:util";
import { runAllInOne } from "./run.js";

const { values } = parseArgs({ options: { config: { type: "string" } }, strict: true });
const stop = new AbortController();
let signals = 0;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    // A second Ctrl-C does not wait for a clean stop.
    if (++signals > 1) process.exit(1);
    stop.abort();
  });
}
process.exitCode = await runAllInOne({
  ...(values.config ? { configPath: values.config } : {}),
  env: process.env,
  signal: stop.signal,
});
process.exit();
