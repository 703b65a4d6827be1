#!/usr/bin/env node
// The `toolbus` launcher: runs the compiled CLI (dist/main.js), or, in a checkout that was not
// built, its TypeScript source through tsx with the @toolbus/source condition.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const dist = new URL("../dist/main.js", import.meta.url);
if (existsSync(fileURLToPath(dist))) {
  await import(dist.href);
} else {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  const main = fileURLToPath(new URL("../src/main.ts", import.meta.url));
  const child = spawn(
    process.execPath,
    ["--conditions=@toolbus/source", "--import", tsx, main, ...process.argv.slice(2)],
    { stdio: "inherit" },
  );
  // Ctrl-C reaches the child through the terminal; a signal sent to this process alone is passed on.
  for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
  child.on("exit", (code, signal) => process.exit(code ?? (signal === "SIGINT" ? 130 : 1)));
}
