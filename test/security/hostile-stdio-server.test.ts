/**
 * A hostile stdio MCP server under `pnpm start` (issue 22: one read the dispatcher's seed from
 * the checkout and called tools as the dispatcher). The probe server of @toolbus/testkit tries
 * every place toolbus keeps credentials — its own environment and working directory, the
 * checkout's `.toolbus/`, the private state directory, and its parent's `/proc` entries
 * (`environ`, `cmdline`, memory through `maps`/`mem`, the `cwd` and `fd` links) — for the NATS
 * seeds, the gateway token and the database URL this test configured. Run as another user
 * (`run_as`, or a `sandbox` wrapper that switches user) it finds none of them. Run as toolbus's
 * own user, what it can still reach is asserted too, as docs/security.md states it.
 */
import { randomBytes } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateNatsIdentities } from "@toolbus/bus";
import { ROLES } from "@toolbus/protocol";
import { freePort, withPgSchema } from "@toolbus/testkit";
import {
  installProbeServer,
  type LootPlace,
  type LootReport,
  type ProbeServer,
  probeHash,
  type WhoAmI,
} from "@toolbus/testkit/probe-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exited, type RunningToolbus, startToolbus, until } from "../e2e/support/pnpm-start.js";

const NOBODY = { uid: 65534, gid: 65534 };
const isRoot = process.getuid?.() === 0;
const NEEDS_ROOT =
  "this test starts stdio servers as `nobody` (run_as), which needs toolbus to run as root (or with CAP_SETUID, CAP_SETGID and CAP_CHOWN): run the tests as root, as CI does in its container";
/** A seed as `pnpm start` would have written it, before seeds left the checkout. */
const NKEY_SEED = /SU[A-Z2-7]{56}/;

/** Yama's ptrace_scope: 0 (or no Yama) lets a process of the same user read another's memory. */
function ptraceScope(): number {
  try {
    return Number(readFileSync("/proc/sys/kernel/yama/ptrace_scope", "utf8").trim());
  } catch {
    return 0;
  }
}

/** Every file under `dir` with its text (the test's own project: small). */
function filesUnder(dir: string): Array<{ path: string; text: string }> {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .map((path) => ({ path, text: readFileSync(path, "latin1") }));
}

describe("a hostile stdio MCP server under pnpm start", () => {
  let toolbus: RunningToolbus;
  let schema: Awaited<ReturnType<typeof withPgSchema>>;
  let probe: ProbeServer;
  let project: string;
  let state: string;
  let url: string;
  let cliSeed = "";
  let legacySeedFile: string;
  let secrets: string | undefined;
  let needlesDir: string | undefined;
  const token = randomBytes(24).toString("hex");
  const secretInEnvironment = `left-in-the-environment-${randomBytes(12).toString("hex")}`;
  const reports = new Map<string, LootReport>();
  const whoami = new Map<string, WhoAmI>();
  let needles: Record<string, string>;

  async function call(server: string, tool: string, args: unknown): Promise<unknown> {
    const response = await fetch(`${url}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
      body: JSON.stringify({
        callId: `hostile-${server}-${tool}-${randomBytes(4).toString("hex")}`,
        tool: `mcp__${server}__${tool}`,
        arguments: JSON.stringify(args),
      }),
    });
    const reply = (await response.json()) as {
      status: string;
      result?: { content: Array<{ text: string }> };
    };
    if (reply.status !== "completed") throw new Error(`${server} ${tool}: ${JSON.stringify(reply)}`);
    return JSON.parse(reply.result!.content[0]!.text);
  }

  beforeAll(async () => {
    project = mkdtempSync(join(tmpdir(), "toolbus-hostile-project-"));
    state = mkdtempSync(join(tmpdir(), "toolbus-hostile-state-"));
    secrets = mkdtempSync(join(tmpdir(), "toolbus-hostile-secrets-"));
    schema = await withPgSchema(process.env.DATABASE_URL!, "hostile");
    writeFileSync(join(secrets, "database-url"), `${schema.url}\n`, { mode: 0o600 });
    writeFileSync(join(secrets, "tokens"), `tester:admin:${token}\n`, { mode: 0o600 });
    // What an older pnpm start left in the checkout: every role's seed.
    legacySeedFile = join(project, ".toolbus", "nats", "identities", "dispatcher.nk");
    mkdirSync(join(project, ".toolbus", "nats", "identities"), { recursive: true });
    const legacy = generateNatsIdentities({ prefix: "toolbus", servers: [] });
    writeFileSync(legacySeedFile, `${legacy.seeds.get("dispatcher")}\n`);

    probe = installProbeServer();
    const server = (name: string, extra: string[]) => [
      `[mcp_servers.${name}]`,
      `command = ${JSON.stringify(probe.command)}`,
      `args = ${JSON.stringify(probe.args)}`,
      'default_tools_approval_mode = "approve"',
      ...extra,
      "",
    ];
    const port = await freePort();
    writeFileSync(
      join(project, "toolbus.toml"),
      [
        "[gateway]",
        `port = ${port}`,
        'tokens_env = "HOSTILE_TOKENS"',
        "",
        ...server("as_nobody", ['run_as = "nobody"']),
        ...server("sandboxed", [
          'sandbox = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]',
        ]),
        ...server("same_user", []),
      ].join("\n"),
    );
    toolbus = startToolbus(
      ["--config", join(project, "toolbus.toml")],
      {
        NATS_URL: undefined,
        NATS_NKEY_FILE: undefined,
        NATS_IDENTITIES_DIR: undefined,
        XDG_STATE_HOME: state,
        // Secrets from files: toolbus's environment holds their paths only.
        DATABASE_URL: undefined,
        DATABASE_URL_FILE: join(secrets, "database-url"),
        HOSTILE_TOKENS_FILE: join(secrets, "tokens"),
        // And one secret left in the environment, to show what that exposes.
        HOSTILE_LEFT_IN_ENV: secretInEnvironment,
      },
      project,
    );
    // Until the banner's line that names the CLI's seed: it comes after "toolbus is running",
    // maybe in a later chunk of the pipe.
    const seedLine = /finds its own in (\S+\/nats\/cli\.nk)\)/;
    await until(() => seedLine.test(toolbus.output()) || toolbus.child.exitCode !== null, "start-up");
    const seedFile = seedLine.exec(toolbus.output())?.[1];
    if (seedFile === undefined) throw new Error(toolbus.output());
    url = `http://127.0.0.1:${port}`;
    cliSeed = readFileSync(seedFile, "utf8").trim();

    // The needles, in a file the probe reads (as any user) and never scans.
    needlesDir = mkdtempSync(join(tmpdir(), "toolbus-hostile-needles-"));
    chmodSync(needlesDir, 0o755);
    needles = {
      "CLI seed": cliSeed,
      "gateway token": token,
      "database URL": schema.url,
      "secret left in toolbus's environment": secretInEnvironment,
    };
    const needlesFile = join(needlesDir, "needles.json");
    writeFileSync(needlesFile, JSON.stringify(needles), { mode: 0o644 });
    chmodSync(needlesFile, 0o644);

    const servers = isRoot ? ["as_nobody", "sandboxed", "same_user"] : ["same_user"];
    // One after another, the same-user one last: each result is stored as an event in the
    // checkout's JetStream store, and a report names what it found by hash only.
    for (const name of servers) {
      whoami.set(name, (await call(name, "whoami", {})) as WhoAmI);
      const paths = [join(project, ".toolbus"), state];
      reports.set(name, (await call(name, "loot", { needlesFile, paths })) as LootReport);
    }
  }, 180_000);

  afterAll(async () => {
    if (toolbus?.child.exitCode === null) {
      toolbus.child.kill("SIGINT");
      await exited(toolbus.child);
    }
    await schema?.drop();
    probe?.dispose();
    // The directories of the servers run as nobody are under the system's temporary directory.
    const nobodyDir = whoami.get("as_nobody")?.cwd;
    if (nobodyDir !== undefined) rmSync(join(nobodyDir, ".."), { recursive: true, force: true });
    for (const dir of [project, state, secrets, needlesDir]) {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    }
  });

  const placesOf = (server: string): Record<string, LootPlace> => {
    if (!reports.has(server)) throw new Error(NEEDS_ROOT);
    return Object.fromEntries(reports.get(server)!.places.map((place) => [place.place, place]));
  };

  describe.each([
    ["run as another user (run_as = nobody)", "as_nobody"],
    ["started through a sandbox wrapper that switches user (setpriv)", "sandboxed"],
  ])("%s", (_, server) => {
    it("runs as nobody, with no group of toolbus's and no secret in its environment", () => {
      if (!isRoot) throw new Error(NEEDS_ROOT);
      const me = whoami.get(server)!;
      expect({ uid: me.uid, gid: me.gid, groups: me.groups }).toEqual({ ...NOBODY, groups: [NOBODY.gid] });
      for (const secret of Object.values(needles)) expect(JSON.stringify(me.env)).not.toContain(secret);
    });

    it("finds no seed, token or database URL anywhere it tries", () => {
      const places = placesOf(server);
      expect(Object.keys(places)).toEqual([
        "own environment",
        "own working directory",
        join(project, ".toolbus"),
        state,
        "parent environ",
        "parent cmdline",
        "parent memory",
        "parent cwd",
        "parent open files",
      ]);
      expect(
        Object.values(places).filter((place) => place.found.length > 0 || place.seeds.length > 0),
      ).toEqual([]);
    });

    it("is refused toolbus's files and /proc entries, and reads only its own and the public command line", () => {
      const places = placesOf(server);
      const refused = (name: string) => ({ readable: places[name]!.readable, error: places[name]!.error });
      for (const name of [
        join(project, ".toolbus"),
        state,
        "parent environ",
        "parent memory",
        "parent cwd",
        "parent open files",
      ]) {
        expect({ name, ...refused(name) }).toEqual({ name, readable: false, error: "EACCES" });
      }
      // Any process may read another's command line: toolbus puts no secret on its own.
      expect(places["parent cmdline"]!.readable).toBe(true);
      expect(places["parent cmdline"]!.read).toBeGreaterThan(0);
    });
  });

  describe("run as toolbus's own user (what docs/security.md says it can still reach)", () => {
    it("works in a directory of its own in the private state directory, not in the checkout", () => {
      const me = whoami.get("same_user")!;
      expect(me.cwd).toBe(
        join(
          readdirSync(join(state, "toolbus")).map((d) => join(state, "toolbus", d))[0]!,
          "servers",
          "same_user",
        ),
      );
      expect(me.cwd.startsWith(project)).toBe(false);
    });

    it("finds nothing in its own environment and directory, nor in the checkout's .toolbus/", () => {
      const places = placesOf("same_user");
      for (const name of [
        "own environment",
        "own working directory",
        join(project, ".toolbus"),
        "parent cwd",
        "parent cmdline",
      ]) {
        expect({
          name,
          readable: places[name]!.readable,
          found: places[name]!.found,
          seeds: places[name]!.seeds,
        }).toEqual({
          name,
          readable: true,
          found: [],
          seeds: [],
        });
      }
    });

    it("reads toolbus's environment: it holds the secret left there, and only paths of the secrets given as files", () => {
      const environ = placesOf("same_user")["parent environ"]!;
      expect({ readable: environ.readable, found: environ.found, seeds: environ.seeds }).toEqual({
        readable: true,
        found: ["secret left in toolbus's environment"],
        seeds: [],
      });
    });

    it("reads the private state directory, and with it the CLI's seed", () => {
      const stateDir = placesOf("same_user")[state]!;
      expect({ found: stateDir.found, seeds: stateDir.seeds }).toEqual({
        found: ["CLI seed"],
        seeds: [probeHash(cliSeed)],
      });
    });

    it("reads toolbus's memory, and with it every secret, unless the kernel restricts ptrace", () => {
      const memory = placesOf("same_user")["parent memory"]!;
      if (ptraceScope() === 0) {
        expect(memory.readable).toBe(true);
        expect(memory.found).toEqual(Object.keys(needles).sort());
        // Every role's seed, generated for the run and held in memory only.
        expect(memory.seeds).toContain(probeHash(cliSeed));
        expect(memory.seeds.length).toBeGreaterThanOrEqual(ROLES.length);
      } else {
        expect({ readable: memory.readable, found: memory.found }).toEqual({ readable: false, found: [] });
      }
    });
  });

  describe("the working tree", () => {
    it("holds no NKey seed of pnpm start's anywhere, the old identities directory removed", () => {
      expect(existsSync(legacySeedFile)).toBe(false);
      const withSeeds = filesUnder(project).filter(
        ({ text }) => NKEY_SEED.test(text) || text.includes(cliSeed),
      );
      expect(withSeeds.map(({ path }) => path)).toEqual([]);
      // The store is there, so the walk read the bus's data and found no seed in it.
      expect(filesUnder(join(project, ".toolbus", "nats")).length).toBeGreaterThan(0);
    });

    it("keeps the CLI's seed in a private directory: the state directories 0700, the seed 0600", () => {
      const seedFile = /finds its own in (\S+\/nats\/cli\.nk)\)/.exec(toolbus.output())![1]!;
      expect(seedFile.startsWith(state)).toBe(true);
      const natsDir = join(seedFile, "..");
      expect([
        statSync(natsDir).mode & 0o777,
        statSync(join(natsDir, "..")).mode & 0o777,
        statSync(seedFile).mode & 0o777,
      ]).toEqual([0o700, 0o700, 0o600]);
      // The pidfile that finds a nats-server a killed toolbus left running; no other identity's seed.
      expect(readdirSync(natsDir).sort()).toEqual(["cli.nk", "nats.conf", "nats.pid", "url"]);
      expect(statSync(join(natsDir, "nats.pid")).mode & 0o777).toBe(0o600);
    });
  });
});
