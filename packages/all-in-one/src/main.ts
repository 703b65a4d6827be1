/** `pnpm start`: runs toolbus in one process until Ctrl-C. */
import { parseArgs } from "node:util";
import { runAllInOne } from "./run.js";
import { SetupError } from "./local-nats.js";

const { values } = parseArgs({ options: { config: { type: "string" } }, strict: true });
try {
  const toolbus = await runAllInOne({
    ...(values.config ? { configPath: values.config } : {}),
    env: process.env,
    cwd: process.cwd(),
  });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    process.stderr.write(`\n${signal}: stopping toolbus…\n`);
    await toolbus.stop();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
} catch (error) {
  // Setup problems (no NATS, a bad config file, a port in use) get one clear line and exit 1.
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`toolbus could not start: ${message}\n`);
  process.exit(error instanceof SetupError ? 2 : 1);
}
