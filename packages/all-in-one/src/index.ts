/** @toolbus/all-in-one: every service in one process (`pnpm start`, `toolbus start`). */

export { type AllInOne, type AllInOneOptions, runAllInOne, startAllInOne } from "./run.js";
export { SetupError } from "./setup-error.js";
