// A start-up timeout above the MCP SDK's 60 s request default (checklist 7): `initialize` waits
// for the configured timeout, and its expiry reads as the reference's timeout advice. The SDK's
// timer is faked to cover 90 s at once; the server is a real child that never answers.

import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { afterEach, expect, it, vi } from "vitest";
import {
  type ConnectorPorts,
  ServerConnector,
  type StartupOutcome,
  type StatusUpdate,
} from "../src/connectors/server-connector.js";
import type { ServerEntry } from "../src/core/catalog-entry.js";

/** The pids of running processes whose command line holds `marker`. */
function processesWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(marker)) pids.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return pids;
}

let connector: ServerConnector | undefined;
afterEach(async () => {
  vi.useRealTimers();
  await connector?.stop();
});

it("[7] waits for a startup_timeout_sec of 90 s past the SDK's 60 s, then shows the timeout advice", async () => {
  const statuses: StatusUpdate[] = [];
  const marker = randomUUID();
  const ports: ConnectorPorts = {
    log: { info() {}, warn() {}, error() {} },
    publishStatus: (_, status) => statuses.push(status),
    writeEntry: async () => ({ revision: 1 }) as ServerEntry,
    relayFor: () => {
      throw new Error("no server requests expected");
    },
    promptsChanged() {},
  };
  // Only the timers the SDK's request timeout uses; the overall start-up bound is an
  // AbortSignal.timeout of 90 real seconds, which this test never reaches.
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  connector = new ServerConnector(
    {
      server: "slow",
      spec: {
        transport: "stdio",
        command: process.execPath,
        args: ["-e", `setInterval(() => {}, 1000); // ${marker}`],
        env: {},
        cwd: tmpdir(),
      },
      required: false,
      startupTimeoutMs: 90_000,
      toolTimeoutMs: 300_000,
      supportsParallelToolCalls: false,
      origin: "stdio",
      maxTools: 2048,
      maxMessageBytes: 1024 * 1024,
    },
    ports,
  );
  let outcome: StartupOutcome | undefined;
  void connector.start().then((settled) => {
    outcome = settled;
  });
  // `initialize` is on its way once its timeout timer is set.
  await vi.waitFor(() => expect(vi.getTimerCount()).toBeGreaterThan(0), { timeout: 10_000 });

  await vi.advanceTimersByTimeAsync(61_000);
  expect({ outcome, state: connector.status }).toEqual({ outcome: undefined, state: "starting" });

  await vi.advanceTimersByTimeAsync(30_000);
  await vi.waitFor(() => expect(outcome).toBeDefined(), { timeout: 10_000 });
  expect(outcome).toEqual({ state: "failed", error: "MCP client startup timed out after 90s" });
  expect(statuses.at(-1)).toEqual({
    state: "failed",
    error:
      "MCP client for `slow` timed out after 90 seconds. Add or adjust `startup_timeout_sec` in your config.toml:\n" +
      "[mcp_servers.slow]\nstartup_timeout_sec = XX",
  });
  // The server that never answered is not left behind: its close sequence (stdin ended, then
  // SIGTERM, then SIGKILL, a grace period apart) runs on the faked clock, which waitFor advances.
  await vi.waitFor(() => expect(processesWith(marker)).toEqual([]), { timeout: 10_000 });
}, 30_000);
