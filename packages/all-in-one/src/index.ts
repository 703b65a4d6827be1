/** @toolbus/all-in-one: every service in one process (`pnpm start`, `toolbus start`). */
export { SetupError } from "./local-nats.js";
export { type AllInOne, type AllInOneOptions, runAllInOne, startAllInOne } from "./run.js";
