/**
 * A toolbus that died without stopping its nats-server (killed, a terminal closed) leaves it
 * running on the folder's JetStream store. The next `pnpm start` in that folder finds it by its
 * pidfile and stops it before starting its own: never two nats-servers on one store.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { withPgSchema } from "@toolbus/testkit";
import { afterAll, describe, expect, it } from "vitest";
import { exited, type RunningToolbus, startToolbus, until } from "./support/pnpm-start.js";

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids of the nats-servers whose command line names `store`. */
function natsServersOn(store: string): number[] {
  const lines = execFileSync("ps", ["-eo", "pid=,args="], { encoding: "utf8" }).split("\n");
  return lines
    .filter((line) => line.includes("nats-server") && line.includes(store))
    .map((line) => Number.parseInt(line.trim(), 10));
}

describe("a nats-server left behind by a toolbus that died", () => {
  const folder = mkdtempSync(join(tmpdir(), "toolbus-leftover-"));
  const state = join(folder, "state");
  const running: RunningToolbus[] = [];
  const drops: Array<() => Promise<void>> = [];

  afterAll(async () => {
    for (const toolbus of running) {
      if (toolbus.child.exitCode === null && toolbus.child.signalCode === null) {
        toolbus.child.kill("SIGINT");
        await exited(toolbus.child);
      }
    }
    for (const store of natsServersOn(folder)) process.kill(store, "SIGKILL");
    for (const drop of drops) await drop();
    rmSync(folder, { recursive: true, force: true });
  });

  async function start(): Promise<RunningToolbus> {
    const schema = await withPgSchema(process.env.DATABASE_URL!, "leftover");
    drops.push(() => schema.drop());
    const toolbus = startToolbus(
      [],
      {
        NATS_URL: undefined,
        NATS_NKEY_FILE: undefined,
        NATS_IDENTITIES_DIR: undefined,
        TOOLBUS_HTTP_PORT: "0",
        DATABASE_URL: schema.url,
        XDG_STATE_HOME: state,
      },
      folder,
    );
    running.push(toolbus);
    await until(
      () => toolbus.output().includes("toolbus is running") || toolbus.child.exitCode !== null,
      "pnpm start",
    );
    expect(toolbus.output()).toContain("toolbus is running");
    return toolbus;
  }

  /** The pidfile of the folder's local nats-server: `{nats, owner}`. */
  function pidFile(): { nats: number; owner: number } {
    const [project] = readdirSync(join(state, "toolbus"));
    return JSON.parse(readFileSync(join(state, "toolbus", project!, "nats", "nats.pid"), "utf8"));
  }

  it("is stopped by the next start in the folder, which runs the only nats-server on the store", async () => {
    const first = await start();
    const leftover = pidFile();
    expect(leftover.owner).toBe(first.child.pid);
    // Killed outright: no Ctrl-C, nothing stops its nats-server.
    first.child.kill("SIGKILL");
    await exited(first.child);
    expect(alive(leftover.nats)).toBe(true);

    const second = await start();
    const now = pidFile();
    expect({
      leftoverAlive: alive(leftover.nats),
      owner: now.owner === second.child.pid,
      servers: natsServersOn(folder),
    }).toEqual({ leftoverAlive: false, owner: true, servers: [now.nats] });

    second.child.kill("SIGINT");
    await exited(second.child);
    expect(natsServersOn(folder)).toEqual([]);
  }, 240_000);
});
