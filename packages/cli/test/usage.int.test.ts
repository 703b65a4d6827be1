/**
 * The CLI without a toolbus: help, usage errors, and what it says when NATS or the services
 * are not there. Each runs the real process.
 */
import { createServer } from "node:net";
import { isolation } from "@toolbus/testkit";
import { describe, expect, it } from "vitest";
import { type CliEnv, runBin, runCli } from "./support/run-cli.js";
import { natsUrl } from "./support/toolbus-stack.js";

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

function env(): CliEnv {
  return { natsUrl: natsUrl(), prefix: isolation("cli_usage").prefix };
}

describe("help", () => {
  it("prints the commands, options, environment and exit codes with --help", async () => {
    const result = await runCli(["--help"], env());
    const commands = result.stdout
      .split("Commands:\n")[1]
      ?.split("\n\n")[0]
      ?.split("\n")
      .map((l) => l.trim().split(" ")[0]);
    expect({
      code: result.code,
      stderr: result.stderr,
      commands,
      exitCodes: result.stdout.includes("Exit codes: 0 success"),
    }).toEqual({
      code: 0,
      stderr: "",
      commands: ["start", "servers", "tools", "call", "approvals", "tail", "nats-config", "provision"],
      exitCodes: true,
    });
  });

  it.each([
    ["start", "Usage: toolbus start [--config <path>] [--log-format <format>] [options]"],
    ["servers", "Usage: toolbus servers [options]"],
    ["tools", "Usage: toolbus tools [query...] [options]"],
    ["call", "Usage: toolbus call <tool> [json] [options]"],
    ["approvals", "Usage: toolbus approvals [options]"],
    ["tail", "Usage: toolbus tail [options]"],
    ["nats-config", "Usage: toolbus nats-config --out <dir> [--config <path>] [--rotate] [options]"],
    ["provision", "Usage: toolbus provision [--config <path>] [options]"],
  ])("prints the usage of %s with --help, without connecting to anything", async (command, usage) => {
    const result = await runCli([command, "--help"], {
      natsUrl: `nats://127.0.0.1:${await closedPort()}`,
      prefix: "toolbus",
    });
    expect({ code: result.code, first: result.stdout.split("\n")[0], stderr: result.stderr }).toEqual({
      code: 0,
      first: usage,
      stderr: "",
    });
  });

  it("runs through the bin/toolbus.js launcher", async () => {
    const result = await runBin(["--version"], env());
    expect(result).toEqual({ code: 0, stdout: "0.1.0\n", stderr: "" });
  });
});

describe("usage errors", () => {
  it.each([
    [["frobnicate"], 'toolbus: unknown command "frobnicate"', "Usage: toolbus <command> [options]"],
    [
      ["servers", "--bogus"],
      "toolbus: Unknown option '--bogus' for toolbus servers",
      "Usage: toolbus servers [options]",
    ],
    [["call"], "toolbus: toolbus call needs <tool>", "Usage: toolbus call <tool> [json] [options]"],
    [
      ["servers", "--timeout", "soon"],
      'toolbus: --timeout needs a positive number of seconds, got "soon"',
      "Usage: toolbus servers [options]",
    ],
    [[], "toolbus: no command given", "Usage: toolbus <command> [options]"],
  ])("%j exits 2 with the usage on stderr and nothing on stdout", async (args, message, usage) => {
    const result = await runCli(args, env());
    const [first, blank, usageLine] = result.stderr.split("\n");
    expect({ code: result.code, stdout: result.stdout, first, blank, usageLine }).toEqual({
      code: 2,
      stdout: "",
      first: message,
      blank: "",
      usageLine: usage,
    });
  });
});

describe("toolbus unreachable", () => {
  it("exits 3 and says to start toolbus when NATS does not answer", async () => {
    const url = `nats://127.0.0.1:${await closedPort()}`;
    const result = await runCli(["servers"], { natsUrl: url, prefix: "toolbus" });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 3,
      stdout: "",
      stderr:
        `toolbus: cannot reach NATS at ${url} (connection refused: connect ECONNREFUSED ${url.slice("nats://".length)}). ` +
        "Start toolbus with `pnpm start` in the toolbus checkout (or `toolbus start`), or set NATS_URL to the address of a running nats-server.\n",
    });
  });

  it("masks the password of a NATS URL it cannot reach", async () => {
    const port = await closedPort();
    const result = await runCli(["servers"], {
      natsUrl: `nats://cli:pw-sentinel-3a7c@127.0.0.1:${port}`,
      prefix: "toolbus",
    });
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 3,
      stdout: "",
      stderr:
        `toolbus: cannot reach NATS at nats://cli:***@127.0.0.1:${port} (connection refused: connect ECONNREFUSED 127.0.0.1:${port}). ` +
        "Start toolbus with `pnpm start` in the toolbus checkout (or `toolbus start`), or set NATS_URL to the address of a running nats-server.\n",
    });
  });

  it("exits 3 and names the NATS it tried and the service to start when nothing serves the prefix", async () => {
    const cli = env();
    const result = await runCli(["call", "everything__echo", "{}", "--json"], cli);
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
      code: 3,
      stdout: "",
      stderr:
        `toolbus: nothing answers on ${cli.prefix}.catalog.get at ${cli.natsUrl}: no toolbus catalog service runs ` +
        `there under the prefix ${cli.prefix}. Start toolbus with \`pnpm start\` in the toolbus checkout (or ` +
        "`toolbus start`), or set NATS_URL to the NATS your toolbus uses (and TOOLBUS_PREFIX, if it runs " +
        "under another prefix).\n",
    });
  });
});
