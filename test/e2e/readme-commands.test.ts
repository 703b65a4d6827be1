/**
 * Every command the README (and the two documents it sends users to first, docs/operations.md
 * and docs/development.md) shows, checked from a fresh clone of this checkout: no build, no
 * `.toolbus/`, no node_modules but what the README's own `pnpm install` lays (from pnpm's store,
 * so in a second). Each runs exactly as written where it ends by itself and does not run this very
 * suite; `pnpm test`, `pnpm build`, `pnpm lint` and `bash .ci/run` are what CI runs, so they are
 * checked as `.ci/run`'s own lines. A command added to the README without a check here fails.
 * The clone is of the last commit (as CI's checkout is): uncommitted changes are not in it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assetStreams, createSubjects } from "@toolbus/protocol";
import { cleanupJetStream, isolation, withPgSchema } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScriptedMessagesApi } from "../real-clients/scripted-messages-api.js";
import { ROOT, until } from "./support/pnpm-start.js";

/** The commands a reader is shown: every line of a `sh` block, and every inline command. */
export function readmeCommands(markdown: string): string[] {
  const commands = new Set<string>();
  for (const block of markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    for (const line of block[1]!.split("\n")) if (line.trim() !== "") commands.add(line.trim());
  }
  for (const span of markdown.matchAll(/`((?:pnpm|npm|npx|bash|node|toolbus) [^`]*)`/g))
    commands.add(span[1]!);
  return [...commands];
}

/** The lines of .ci/run that run a command (comments and blank lines left out). */
const ciLines = () =>
  readFileSync(join(ROOT, ".ci/run"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "" && !line.trim().startsWith("#"));

interface Ran {
  code: number | null;
  output: string;
}

let clone: string;
let env: NodeJS.ProcessEnv;
let installed: Ran;

/** Runs `command` through sh in the clone's root, as a reader types it. */
function run(command: string, timeoutMs = 120_000, extraEnv: NodeJS.ProcessEnv = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], {
      cwd: clone,
      env: { ...env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`\`${command}\` did not end within ${timeoutMs / 1000} s:\n${output.slice(-2_000)}`));
    }, timeoutMs);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** The port the README's client snippets name (toolbus's default). */
const README_PORT = 8080;

/** Fails, saying why, when something already listens on `port` of loopback. */
function expectPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `port ${port} of 127.0.0.1 is taken (${error.code}); the README's client snippets name it, so this test runs toolbus there: stop what listens on it`,
        ),
      ),
    );
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve()));
  });
}

/** Whether any process of the group `pid` leads is still running. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The documents whose commands are checked here. */
const DOCUMENTS = ["README.md", "docs/operations.md", "docs/development.md"];

/** How each command of those documents is checked. */
const CHECKS: Record<string, string> = {
  "bash scripts/setup.sh && pnpm start": "runs it: a running toolbus the CLI reaches, stopped by Ctrl-C",
  "pnpm start": "the same run as `bash scripts/setup.sh && pnpm start`",
  "pnpm exec toolbus --help": "runs it",
  "toolbus servers": "runs it through pnpm exec against that running toolbus",
  "claude mcp add --transport http toolbus http://127.0.0.1:8080/mcp":
    "runs it with the real Claude Code (a pinned devDependency), then Claude Code calls the demo's echo through that running toolbus",
  "toolbus tools": "runs it through pnpm exec against that running toolbus",
  "toolbus call <tool> '<json>'":
    "runs it through pnpm exec against that running toolbus, with the demo's echo",
  "toolbus approvals": "runs it through pnpm exec against that running toolbus",
  "toolbus tail": "runs it through pnpm exec against that running toolbus while a call is made",
  "pnpm exec toolbus nats-config --out identities --config toolbus.toml":
    "runs it with a toolbus.toml of two servers: a connector identity for each",
  "pnpm exec toolbus provision --config toolbus.toml":
    "runs it on the tests' NATS, under a prefix of its own, twice",
  "toolbus provision": "the same as `pnpm exec toolbus provision --config toolbus.toml`",
  "bash scripts/setup.sh --tests": "runs it",
  "pnpm bench": "runs it with a name that selects no benchmark (the benchmarks themselves take minutes)",
  "pnpm bench gateway": "checks `gateway` selects one benchmark (it runs for minutes)",
  "pnpm bench dispatch": "checks `dispatch` selects one benchmark (it runs for minutes)",
  "pnpm test": "a line of .ci/run: CI runs it",
  "pnpm build": "a line of .ci/run: CI runs it",
  "pnpm lint": "a line of .ci/run: CI runs it",
  "bash .ci/run": "CI's own entry; its lines are checked",
  "pnpm cluster":
    "is the cluster harness's entry, whose clusters test/cluster starts in CI (too heavy to start a third here)",
  "node --import tsx test/requirements/checklist-report.ts": "runs it",
};

beforeAll(async () => {
  clone = mkdtempSync(join(tmpdir(), "toolbus-clone-"));
  execFileSync("git", ["clone", "--quiet", ROOT, clone]);
  // What a reader's shell has: none of the test run's own services or prefix.
  env = { ...process.env, CI: "true", NO_COLOR: "1", LOG_LEVEL: "warn" };
  for (const name of ["NATS_URL", "DATABASE_URL", "TOOLBUS_PREFIX", "TOOLBUS_CONFIG", "NODE_OPTIONS"]) {
    delete env[name];
  }
  // First, as in the README: every other command needs the packages.
  installed = await run("pnpm install");
}, 180_000);

afterAll(() => {
  if (clone) rmSync(clone, { recursive: true, force: true });
});

describe("the README's commands, from a fresh clone", () => {
  it("each has a check here", () => {
    const commands = [
      ...new Set(DOCUMENTS.flatMap((file) => readmeCommands(readFileSync(join(clone, file), "utf8")))),
    ];
    expect(commands.filter((command) => !(command in CHECKS))).toEqual([]);
    expect(Object.keys(CHECKS).filter((command) => !commands.includes(command))).toEqual([]);
  });

  it("`pnpm install` lays the workspace, the CLI's command included", () => {
    expect({ code: installed.code, bin: existsSync(join(clone, "node_modules/.bin/toolbus")) }).toEqual({
      code: 0,
      bin: true,
    });
  });

  it("`pnpm exec toolbus --help` prints the CLI's usage", async () => {
    const ran = await run("pnpm exec toolbus --help");
    expect({ code: ran.code, usage: ran.output.includes("Usage: toolbus <command> [options]") }).toEqual({
      code: 0,
      usage: true,
    });
  });

  it("`pnpm exec toolbus nats-config --out identities --config toolbus.toml` writes every identity, a connector's for each server", async () => {
    writeFileSync(
      join(clone, "toolbus.toml"),
      '[mcp_servers.alpha]\ncommand = "alpha"\n\n[mcp_servers.beta]\ncommand = "beta"\n',
    );
    try {
      const ran = await run("pnpm exec toolbus nats-config --out identities --config toolbus.toml");
      expect(ran.code, ran.output).toBe(0);
      for (const file of [
        "auth.conf",
        "provisioner.nk",
        "catalog.nk",
        "dispatcher.nk",
        "gateway.nk",
        "cli.nk",
        "connector-alpha.nk",
        "connector-beta.nk",
      ]) {
        expect(existsSync(join(clone, "identities", file)), file).toBe(true);
      }
    } finally {
      // `pnpm start` below reads ./toolbus.toml when there is one: it must find the demo.
      rmSync(join(clone, "toolbus.toml"));
    }
  });

  it("`pnpm exec toolbus provision --config toolbus.toml` creates every stream, bucket and consumer, and finds them unchanged the next time", async () => {
    const { prefix } = isolation("provision");
    const natsUrl = process.env.NATS_URL as string;
    writeFileSync(join(clone, "toolbus.toml"), '[mcp_servers.alpha]\ncommand = "alpha"\n');
    /** The assets each line of its report names, by what became of them. */
    const provisionOnce = async () => {
      const ran = await run("pnpm exec toolbus provision --config toolbus.toml", 120_000, {
        NATS_URL: natsUrl,
        TOOLBUS_PREFIX: prefix,
      });
      expect(ran.code, ran.output).toBe(0);
      const named = (what: string) =>
        [...ran.output.matchAll(new RegExp(`^${what} +(\\S+)$`, "gm"))].map((match) => match[1]!);
      return { created: named("created"), updated: named("updated"), unchanged: named("unchanged") };
    };
    try {
      const first = await provisionOnce();
      expect(first.created).toEqual(expect.arrayContaining([...assetStreams(createSubjects(prefix))]));
      const second = await provisionOnce();
      expect({
        created: second.created,
        updated: second.updated,
        unchanged: second.unchanged.length,
      }).toEqual({
        created: [],
        updated: [],
        unchanged: first.created.length,
      });
    } finally {
      rmSync(join(clone, "toolbus.toml"));
      await cleanupJetStream(natsUrl, prefix);
    }
  });

  it("`bash scripts/setup.sh --tests` finds what the tests need here and installs the packages", async () => {
    const ran = await run("bash scripts/setup.sh --tests", 300_000);
    expect({ code: ran.code, last: ran.output.includes("== pnpm install") }).toEqual({ code: 0, last: true });
  }, 320_000);

  it("`pnpm bench` runs the benchmarks' entry (here with a name that selects none)", async () => {
    const ran = await run("pnpm bench no-such-benchmark");
    expect(ran.code).not.toBe(0);
    expect(ran.output).toContain("no benchmark matches no-such-benchmark; there are: catalog-normalize");
    // `pnpm bench chaos`, `… gateway` and `… dispatch` each select one benchmark by (part of) its name.
    const names = ran.output.split("there are: ")[1]?.split("\n")[0]?.trim().split(", ") ?? [];
    expect(
      ["chaos", "gateway", "dispatch"].map((wanted) => names.filter((name) => name.includes(wanted))),
    ).toEqual([["chaos"], ["gateway-peers"], ["dispatch-call"]]);
    // `pnpm bench` type-checks the whole workspace first (`tsc -b`): on a busy machine that alone
    // takes longer than the e2e default of 60 s, so the test gets `run`'s own budget.
  }, 130_000);

  it("`pnpm cluster` runs the cluster harness's entry, the one the cluster tests use", () => {
    const { scripts } = JSON.parse(readFileSync(join(clone, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    expect(scripts.cluster).toBe(
      "node --conditions=@toolbus/source --import tsx packages/testkit/src/cluster/main.ts",
    );
    expect(existsSync(join(clone, "packages/testkit/src/cluster/main.ts"))).toBe(true);
  });

  it("`node --import tsx test/requirements/checklist-report.ts` prints the checklist's report", async () => {
    const ran = await run("node --import tsx test/requirements/checklist-report.ts");
    expect({
      code: ran.code,
      summary: ran.output
        .split("\n")[0]
        ?.startsWith("Acceptance checklist (docs/reference-behavior.md §12): 62 items"),
    }).toEqual({ code: 0, summary: true });
  });

  it("`pnpm test`, `pnpm build`, `pnpm lint` and the set-up are what `bash .ci/run` runs", () => {
    const lines = ciLines();
    for (const command of ["bash scripts/setup.sh --tests", "pnpm build", "pnpm lint", "pnpm test"]) {
      expect(
        lines.some((line) => new RegExp(`(^|[\\s=])${command.replace(/ /g, "\\s+")}(\\s|$)`).test(line)),
        command,
      ).toBe(true);
    }
    // Failed tests, and files that failed outside their tests, are what it counts as failed.
    expect(lines.join("\n")).toMatch(/\} passed, \$\{r\.numFailedTests \+ broken\.length\} failed/);
  });

  describe("`bash scripts/setup.sh && pnpm start`", () => {
    const { prefix } = isolation("readme");
    let schema: Awaited<ReturnType<typeof withPgSchema>>;
    let toolbus: ChildProcess;
    let output = "";

    beforeAll(async () => {
      // On the README's own port: the client snippets name it.
      await expectPortFree(README_PORT);
      schema = await withPgSchema(process.env.DATABASE_URL!, "readme");
      // In a terminal (a pseudo-terminal, util-linux `script`), where Ctrl-C is a key, as a
      // reader runs it; at the log level a reader has (LOG_LEVEL unset).
      toolbus = spawn(
        "script",
        ["--quiet", "--flush", "--return", "--command", "bash scripts/setup.sh && pnpm start", "/dev/null"],
        {
          cwd: clone,
          // The test's Postgres instead of a PGlite (slower to create); NATS and the port as written.
          env: {
            ...env,
            LOG_LEVEL: undefined,
            SHELL: "/bin/bash",
            TOOLBUS_PREFIX: prefix,
            DATABASE_URL: schema.url,
          },
          stdio: ["pipe", "pipe", "pipe"],
          detached: true,
        },
      );
      toolbus.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      toolbus.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
      await until(() => output.includes("toolbus is running") || toolbus.exitCode !== null, "pnpm start");
    }, 180_000);

    /** The local nats-server's pidfile, beside the CLI's seed the banner names. */
    const natsPid = (): number | undefined => {
      const seed = /finds its own in (\S+)\/cli\.nk\)/.exec(output)?.[1];
      if (seed === undefined || !existsSync(join(seed, "nats.pid"))) return undefined;
      return (JSON.parse(readFileSync(join(seed, "nats.pid"), "utf8")) as { nats: number }).nats;
    };

    afterAll(async () => {
      // The terminal's processes end with it (SIGHUP); the nats-server runs in a group of its own.
      const nats = natsPid();
      if (toolbus?.pid !== undefined && groupAlive(toolbus.pid)) process.kill(-toolbus.pid, "SIGKILL");
      if (nats !== undefined && groupAlive(nats)) process.kill(nats, "SIGKILL");
      await schema?.drop();
    });

    it("ends in a running toolbus on its own authenticated nats-server", () => {
      expect(output).toContain("toolbus is running (1 server(s) ready, 0 failed)");
      // The clone has no toolbus.toml nor .mcp.json: the banner says the demo runs, and how not to.
      expect(output).toContain("  config         the demo (server-everything): write a toolbus.toml");
      // The CLI's seed is in the project's private state directory, never in the clone.
      const seed = /the toolbus CLI run in this folder finds its own in (\S+\/nats\/cli\.nk)\)/.exec(
        output,
      )?.[1];
      expect(seed).toBeDefined();
      expect(seed!.startsWith(clone)).toBe(false);
    });

    it("`toolbus servers` from the same folder lists the demo server, ready", async () => {
      const ran = await run("pnpm exec toolbus servers", 60_000, { TOOLBUS_PREFIX: prefix });
      expect({ code: ran.code, row: /^everything\s+ready\b/m.test(ran.output) }, ran.output).toEqual({
        code: 0,
        row: true,
      });
    });

    it("`toolbus tools` lists the demo's tools by the name MCP clients see", async () => {
      const ran = await run("pnpm exec toolbus tools", 60_000, { TOOLBUS_PREFIX: prefix });
      expect({ code: ran.code, echo: /^everything__echo\b/m.test(ran.output) }, ran.output).toEqual({
        code: 0,
        echo: true,
      });
    });

    it("`claude mcp add …` as written gives Claude Code the tools, and its call runs through toolbus", async () => {
      const command = readmeCommands(readFileSync(join(clone, "README.md"), "utf8")).find((line) =>
        line.startsWith("claude mcp add"),
      );
      expect(command).toBe("claude mcp add --transport http toolbus http://127.0.0.1:8080/mcp");
      const model = await startScriptedMessagesApi({
        tool: "mcp__toolbus__everything__echo",
        input: { message: "hello from Claude Code" },
      });
      const home = mkdtempSync(join(tmpdir(), "toolbus-claude-home-"));
      try {
        const claudeEnv = {
          HOME: home,
          PATH: `${join(clone, "test/node_modules/.bin")}:${env.PATH}`,
          ANTHROPIC_BASE_URL: model.baseUrl,
          ANTHROPIC_API_KEY: "sk-ant-scripted",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_AUTOUPDATER: "1",
          // Offer the MCP tools in the first request rather than behind Claude Code's ToolSearch,
          // which the scripted model does not drive.
          ENABLE_TOOL_SEARCH: "false",
          // Print mode does not wait for MCP servers by default: its first request could go out
          // before toolbus's tools are known (it then offers WaitForMcpServers instead).
          MCP_CONNECTION_NONBLOCKING: "false",
        };
        const added = await run(command!, 60_000, claudeEnv);
        expect(added.code, added.output).toBe(0);
        const asked = await run(
          `claude -p 'Echo a greeting' --allowedTools mcp__toolbus__everything__echo`,
          120_000,
          claudeEnv,
        );
        expect(asked.code, asked.output).toBe(0);
        const withTools = model.exchanges.find((exchange) =>
          exchange.offered.includes("mcp__toolbus__everything__echo"),
        );
        expect(withTools, JSON.stringify(model.exchanges)).toBeDefined();
        // What the model was given back is what the echo server answered, through toolbus.
        expect(model.exchanges.flatMap((exchange) => exchange.toolResults)).toEqual([
          "Echo: hello from Claude Code",
        ]);
        expect(asked.output).toContain("The tool said: Echo: hello from Claude Code");
      } finally {
        await model.close();
        rmSync(home, { recursive: true, force: true });
      }
    }, 200_000);

    it("`toolbus call <tool> '<json>'` prints what the tool answered, as text", async () => {
      const ran = await run(
        `pnpm exec toolbus call everything__echo '{"message":"hello from the README"}'`,
        60_000,
        {
          TOOLBUS_PREFIX: prefix,
        },
      );
      expect(
        { code: ran.code, text: ran.output.includes("Echo: hello from the README") },
        ran.output,
      ).toEqual({
        code: 0,
        text: true,
      });
      expect(ran.output).not.toContain('"type":"text"');
    });

    it("`toolbus approvals` says nothing waits", async () => {
      const ran = await run("pnpm exec toolbus approvals", 60_000, { TOOLBUS_PREFIX: prefix });
      expect({ code: ran.code, output: ran.output.trim() }).toEqual({
        code: 0,
        output: "No approval requests are pending.",
      });
    });

    it("`toolbus tail` prints a call's begin and end as it happens", async () => {
      const tail = spawn("sh", ["-c", "pnpm exec toolbus tail"], {
        cwd: clone,
        env: { ...env, TOOLBUS_PREFIX: prefix },
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      let seen = "";
      tail.stdout?.on("data", (chunk: Buffer) => (seen += chunk.toString()));
      tail.stderr?.on("data", (chunk: Buffer) => (seen += chunk.toString()));
      try {
        await until(() => seen.includes("Listening on") || tail.exitCode !== null, "toolbus tail to listen");
        expect(tail.exitCode, seen).toBeNull();
        const ran = await run(`pnpm exec toolbus call everything__echo '{"message":"tailed"}'`, 60_000, {
          TOOLBUS_PREFIX: prefix,
        });
        expect(ran.code, ran.output).toBe(0);
        const callLines = () => seen.split("\n").filter((line) => line.includes("everything__echo"));
        await until(() => callLines().length >= 2, "the call's begin and end in the tail");
        expect(callLines().join("\n")).toMatch(/completed/);
      } finally {
        if (tail.pid !== undefined && groupAlive(tail.pid)) process.kill(-tail.pid, "SIGINT");
      }
    });

    it("shows people lines, no JSON, in the terminal", () => {
      const lines = output.replace(/\r/g, "").split("\n");
      expect(lines.filter((line) => line.trim().startsWith("{"))).toEqual([]);
      expect(lines.some((line) => /^\[\d\d:\d\d:\d\d\] INFO: gateway: gateway ready/.test(line))).toBe(true);
    });

    it("stops cleanly on Ctrl-C, exit 0, its nats-server and MCP server with it", async () => {
      const nats = natsPid();
      expect(nats).toBeDefined();
      // The key: the terminal sends SIGINT to its foreground group (bash, pnpm, node).
      toolbus.stdin?.write("\x03");
      await until(() => toolbus.exitCode !== null, "pnpm start to stop", 30_000);
      expect(toolbus.exitCode, output).toBe(0);
      expect(groupAlive(nats!)).toBe(false);
      expect(output).toContain("stopping toolbus…");
      // Quietly: no failure of a part, no reconnect warning, no "[ELIFECYCLE] Command failed" from pnpm.
      expect(output.split("stopping toolbus…")[1]?.replace(/\r/g, "").trim()).toBe("");
    }, 40_000);
  });
});
