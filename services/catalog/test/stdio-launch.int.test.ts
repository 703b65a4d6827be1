// Where, as whom and through what a stdio server runs (core/stdio-launch.ts): a directory of
// its own rather than toolbus's working directory, `run_as`, `sandbox`, and the errors that say
// what to do. The server is @toolbus/testkit's probe, which reports who and where it is.
import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import type { TomlValue } from "@toolbus/testkit";
import { installProbeServer, type ProbeServer, type WhoAmI } from "@toolbus/testkit/probe-server";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { serverRoots } from "../src/adapters/stdio/prepare-launch.js";
import { CatalogHarness, toolbusToml } from "./support/harness.js";

const NEEDS_ROOT =
  "this test starts stdio servers as another user (run_as), which needs the catalog to run as root: run the tests as root, as CI does in its container";

let harness: CatalogHarness;
let probe: ProbeServer;
beforeAll(() => {
  probe = installProbeServer();
});
afterAll(() => probe.dispose());
afterEach(async () => {
  await harness?.close();
});

function requireRoot(): void {
  if (process.getuid?.() !== 0) throw new Error(NEEDS_ROOT);
}

async function whoami(server: string): Promise<WhoAmI> {
  const reply = await harness.ok<{ result: { content: Array<{ text: string }> } }>(
    harness.subjects.connectorCall(server),
    { callId: `whoami-${server}`, tool: "whoami", preparedRevision: (await harness.entry(server))!.revision },
  );
  return JSON.parse(reply.result.content[0]!.text) as WhoAmI;
}

/** Starts the catalog with `servers` (each the probe plus `keys`) and `[catalog]` `catalog`. */
async function start(
  servers: Record<string, Record<string, TomlValue>>,
  options: { catalog?: Record<string, TomlValue>; env?: Record<string, string | undefined> } = {},
) {
  const toml = toolbusToml({
    servers: Object.fromEntries(
      Object.entries(servers).map(([name, keys]) => [
        name,
        { command: probe.command, args: probe.args, ...keys },
      ]),
    ),
    ...(options.catalog ? { catalog: options.catalog } : {}),
  });
  const { service } = await harness.start(toml, { ...(options.env ? { env: options.env } : {}) });
  return service.startup;
}

/** The shared root of servers run as another user, removed with the harness. */
function sharedRoot(): string {
  const root = serverRoots(harness.stateDir()).shared;
  harness.defer(async () => rmSync(root, { recursive: true, force: true }));
  return root;
}

describe("a stdio server's working directory", () => {
  it("is a directory of its own in the private state directory (0700), never the catalog's own", async () => {
    harness = await CatalogHarness.create("stdio_launch");
    expect(await start({ probe: {} })).toEqual({ ready: ["probe"], failed: [], cancelled: [] });
    const me = await whoami("probe");
    expect(me.cwd).toBe(join(harness.stateDir(), "servers", "probe"));
    expect(me.cwd).not.toBe(process.cwd());
    expect([statSync(me.cwd).mode & 0o777, statSync(join(me.cwd, "..")).mode & 0o777]).toEqual([
      0o700, 0o700,
    ]);
  });

  it("is `cwd` when the server sets it", async () => {
    harness = await CatalogHarness.create("stdio_launch");
    const dir = mkdtempSync(join(tmpdir(), "toolbus-cwd-"));
    harness.defer(async () => rmSync(dir, { recursive: true, force: true }));
    await start({ probe: { cwd: dir } });
    expect((await whoami("probe")).cwd).toBe(dir);
  });

  it("is `<servers_dir>/<name>` with [catalog] servers_dir", async () => {
    harness = await CatalogHarness.create("stdio_launch");
    const dir = mkdtempSync(join(tmpdir(), "toolbus-servers-dir-"));
    harness.defer(async () => rmSync(dir, { recursive: true, force: true }));
    await start({ probe: {} }, { catalog: { servers_dir: dir } });
    expect((await whoami("probe")).cwd).toBe(join(dir, "probe"));
  });

  it("fails the server, and says what to do, when its directory cannot be made (a read-only root, say)", async () => {
    harness = await CatalogHarness.create("stdio_launch");
    const dir = mkdtempSync(join(tmpdir(), "toolbus-not-a-dir-"));
    harness.defer(async () => rmSync(dir, { recursive: true, force: true }));
    // A file where a directory should be: refused to root too, unlike a mode.
    writeFileSync(join(dir, "file"), "");
    const root = join(dir, "file", "servers");
    expect(await start({ probe: {} }, { catalog: { servers_dir: root } })).toMatchObject({
      failed: [
        {
          server: "probe",
          error: `cannot make ${join(root, "probe")}, the server's own working directory (ENOTDIR): set [catalog] servers_dir (or XDG_STATE_HOME) to a directory toolbus may write, or give the server a cwd`,
        },
      ],
    });
  });

  it("fails the server, and says what to do, when `cwd` is not a directory", async () => {
    harness = await CatalogHarness.create("stdio_launch");
    const missing = join(tmpdir(), "toolbus-no-such-dir", "nested");
    expect(await start({ probe: { cwd: missing } })).toEqual({
      ready: [],
      failed: [{ server: "probe", error: `cwd = "${missing}" is not a directory; create it, or fix cwd` }],
      cancelled: [],
    });
  });
});

describe("a stdio server's environment", () => {
  it("gets a variable of env_vars given to toolbus as <NAME>_FILE as NAME, with the file's content", async () => {
    harness = await CatalogHarness.create("stdio_launch");
    const dir = mkdtempSync(join(tmpdir(), "toolbus-env-file-"));
    harness.defer(async () => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "api-key"), "k-from-file\n", { mode: 0o600 });
    await start(
      { probe: { env_vars: ["PROBE_API_KEY"] } },
      {
        env: {
          PATH: process.env.PATH,
          PROBE_API_KEY_FILE: join(dir, "api-key"),
          DATABASE_URL: "postgres://x",
        },
      },
    );
    const { env } = await whoami("probe");
    expect(env.PROBE_API_KEY).toBe("k-from-file");
    expect(Object.keys(env).filter((name) => name.endsWith("_FILE") || name === "DATABASE_URL")).toEqual([]);
  });
});

describe("run_as", () => {
  it("starts the server as that user, in a directory of its own it owns (0700) under a root others may pass but not list", async () => {
    requireRoot();
    harness = await CatalogHarness.create("stdio_launch");
    const root = sharedRoot();
    await start({ probe: { run_as: "nobody" } });
    const me = await whoami("probe");
    expect({ uid: me.uid, gid: me.gid, groups: me.groups, cwd: me.cwd }).toEqual({
      uid: 65534,
      gid: 65534,
      groups: [65534],
      cwd: join(root, "probe"),
    });
    expect({ HOME: me.env.HOME, USER: me.env.USER, LOGNAME: me.env.LOGNAME }).toEqual({
      HOME: me.cwd,
      USER: "nobody",
      LOGNAME: "nobody",
    });
    const dir = statSync(me.cwd);
    expect([dir.uid, dir.mode & 0o777, statSync(root).mode & 0o777, statSync(root).uid]).toEqual([
      65534, 0o700, 0o711, 0,
    ]);
  });

  it("takes `uid:gid`, and [catalog] run_as as every server's default, a server's own winning", async () => {
    requireRoot();
    harness = await CatalogHarness.create("stdio_launch");
    sharedRoot();
    await start({ plain: {}, own: { run_as: "1234:4321" } }, { catalog: { run_as: "nobody" } });
    const [plain, own] = await Promise.all([whoami("plain"), whoami("own")]);
    expect([plain.uid, own.uid, own.gid, own.env.USER]).toEqual([65534, 1234, 4321, undefined]);
  });

  it("gives the user its directory in [catalog] servers_dir, and refuses a servers_dir others may write", async () => {
    requireRoot();
    harness = await CatalogHarness.create("stdio_launch");
    const dir = mkdtempSync(join(tmpdir(), "toolbus-servers-dir-"));
    harness.defer(async () => rmSync(dir, { recursive: true, force: true }));
    chmodSync(dir, 0o755);
    await start({ probe: { run_as: "nobody" } }, { catalog: { servers_dir: dir } });
    expect((await whoami("probe")).cwd).toBe(join(dir, "probe"));
    expect(statSync(join(dir, "probe")).uid).toBe(65534);
    await harness.close();

    harness = await CatalogHarness.create("stdio_launch");
    const open = mkdtempSync(join(tmpdir(), "toolbus-servers-dir-open-"));
    harness.defer(async () => rmSync(open, { recursive: true, force: true }));
    chmodSync(open, 0o777);
    expect(await start({ probe: { run_as: "nobody" } }, { catalog: { servers_dir: open } })).toMatchObject({
      failed: [
        {
          server: "probe",
          error: `${open} ([catalog] servers_dir) is writable by other users, who could swap a server's directory for a link: chmod go-w it`,
        },
      ],
    });
  });

  it("fails the server, naming the user, when there is no such user", async () => {
    harness = await CatalogHarness.create("stdio_launch");
    const startup = await start({ probe: { run_as: "toolbus-no-such-user" } });
    expect(startup.failed).toEqual([
      {
        server: "probe",
        error: expect.stringMatching(
          /^run_as = "toolbus-no-such-user": no such user on this machine \(id: .*\); create the user, or give an existing one or "<uid>:<gid>"$/,
        ),
      },
    ]);
  });

  it("says what to do when toolbus may not start processes as another user", async () => {
    requireRoot();
    // The transport, run by an unprivileged process (as toolbus would be without root).
    const dir = mkdtempSync(join(tmpdir(), "toolbus-not-root-"));
    chmodSync(dir, 0o755);
    const transport = new URL("../src/adapters/mcp/bounded-transports.ts", import.meta.url).href;
    const script = join(dir, "spawn-as-root.mts");
    writeFileSync(
      script,
      [
        `const { BoundedStdioClientTransport } = await import(${JSON.stringify(transport)});`,
        "const launch = { command: process.execPath, args: ['-e', ''], env: {}, cwd: process.cwd(), user: { uid: 0, gid: 0, runAs: 'root' } };",
        "const cap = { maxMessageBytes: 1024, dropped() {} };",
        "await new BoundedStdioClientTransport(launch, cap).start().then(() => console.log('started'), (e) => console.log(e.message));",
      ].join("\n"),
    );
    chmodSync(script, 0o644);
    const tsx = pathToFileURL(join(process.cwd(), "node_modules/tsx/dist/loader.mjs")).href;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--conditions=@toolbus/source", "--import", tsx, script],
      { uid: 65534, gid: 65534, cwd: dir },
    );
    rmSync(dir, { recursive: true, force: true });
    expect(stdout.trim()).toBe(
      "cannot start it as root (run_as): toolbus runs as uid 65534 and may not start processes as another user; run toolbus as root or give it CAP_SETUID and CAP_SETGID, or remove run_as",
    );
  });
});

describe("sandbox", () => {
  it("starts the server through the wrapper, {cwd} standing for its directory; [] turns [catalog]'s off", async () => {
    harness = await CatalogHarness.create("stdio_launch");
    const dir = mkdtempSync(join(tmpdir(), "toolbus-sandbox-"));
    harness.defer(async () => rmSync(dir, { recursive: true, force: true }));
    const marker = join(dir, "wrapped");
    // A wrapper that notes what it was given, then runs the server's command.
    const wrapper = ["sh", "-c", 'printf %s "$1" >> "$2"; shift 2; exec "$@"', "wrapper", "{cwd}", marker];
    expect(await start({ wrapped: {}, bare: { sandbox: [] } }, { catalog: { sandbox: wrapper } })).toEqual({
      ready: ["bare", "wrapped"],
      failed: [],
      cancelled: [],
    });
    expect(readFileSync(marker, "utf8")).toBe(join(harness.stateDir(), "servers", "wrapped"));
    expect((await whoami("wrapped")).cwd).toBe(join(harness.stateDir(), "servers", "wrapped"));
  });
});
