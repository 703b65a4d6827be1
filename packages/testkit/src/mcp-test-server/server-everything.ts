/**
 * Launchers for @modelcontextprotocol/server-everything, the reference MCP server: its stdio
 * command, and its streamable HTTP mode (`dist/index.js streamableHttp`, port from env PORT,
 * endpoint `/mcp`, "listening on port N" on stderr once ready).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { freePort } from "@toolbus/config";
import { spawnUntilReady } from "./child.js";

const PACKAGE = "@modelcontextprotocol/server-everything";

function serverEverythingBin(): string {
  const packageJson = createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`);
  const { bin } = JSON.parse(readFileSync(packageJson, "utf8")) as { bin: Record<string, string> };
  const entry = bin["mcp-server-everything"];
  if (!entry) throw new Error(`${PACKAGE} declares no mcp-server-everything bin; check its version`);
  return join(dirname(packageJson), entry);
}

/** The command that serves server-everything over stdio. */
export function serverEverythingCommand(): { command: string; args: string[] } {
  return { command: process.execPath, args: [serverEverythingBin(), "stdio"] };
}

/** Spawns server-everything in streamable HTTP mode on a free port. */
export async function startServerEverythingHttp(): Promise<{ url: string; stop(): Promise<void> }> {
  // It takes its port from PORT and cannot report a port 0 choice, so pick one; retry if taken meanwhile.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      const child = await spawnUntilReady({
        command: process.execPath,
        args: [serverEverythingBin(), "streamableHttp"],
        env: { ...process.env, PORT: String(port) },
        readyPattern: /listening on port (\d+)/,
        what: "server-everything (streamableHttp)",
      });
      return { url: `http://127.0.0.1:${child.ready}/mcp`, stop: child.stop };
    } catch (error) {
      if (attempt >= 3 || !/already in use/.test((error as Error).message)) throw error;
    }
  }
}
