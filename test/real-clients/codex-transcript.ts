/**
 * A real OpenAI Codex session through toolbus, written down as a transcript: `pnpm start` with a
 * bearer token and an MCP server whose tool needs approval, Codex pointed at the gateway
 * (`mcp_servers.toolbus`, `bearer_token_env_var`) and at a scripted model on loopback, then three
 * runs — `codex exec` as it comes, `codex exec` with full access, and `codex app-server` (what
 * Codex's IDE extension and TUI drive) with a user who answers "Allow and don't ask me again".
 * For each: what Codex printed, what the model saw, the MCP messages between Codex and the
 * gateway, and toolbus's events. It checks what each run must show and exits 1 when one fails.
 *
 * Run through scripts/codex-transcript.sh (it installs the pinned Codex): CODEX_BIN names the
 * `codex` launcher; the first argument, the Markdown file to write.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePort } from "@toolbus/testkit";
import { startTestServer } from "@toolbus/testkit/mcp-test-server";
import { exited, ROOT, startToolbus, until } from "../e2e/support/pnpm-start.js";
import { runAppServer } from "./codex-app-server.js";
import { describeEvent, type GatewayEvent, watchGatewayEvents } from "./gateway-events.js";
import { startRecordingProxy } from "./recording-proxy.js";
import { startScriptedModel } from "./scripted-model.js";

const codex = process.env.CODEX_BIN;
const out = process.argv[2];
if (!codex || !out) {
  console.error(
    "usage: CODEX_BIN=<path to codex> codex-transcript.ts <transcript.md> (see scripts/codex-transcript.sh)",
  );
  process.exit(2);
}
const RUN_TIMEOUT_MS = 120_000;

const dir = mkdtempSync(join(tmpdir(), "toolbus-codex-"));
const work = join(dir, "work");
const codexHome = join(dir, "codex-home");
for (const folder of [work, codexHome, join(dir, "home")]) mkdirSync(folder, { recursive: true });
const userToken = randomBytes(24).toString("hex");
const observerToken = randomBytes(24).toString("hex");
let testServerDir = "<none>";
const redact = (text: string) =>
  text
    .replaceAll(userToken, "<token>")
    .replaceAll(testServerDir, "<test-server>")
    .replaceAll(observerToken, "<observer-token>")
    .replaceAll(dir, "<tmp>")
    .replaceAll(ROOT.replace(/\/$/, ""), "<checkout>");

interface Check {
  run: string;
  what: string;
  ok: boolean;
}
const checks: Check[] = [];
const check = (run: string, what: string, ok: boolean) => checks.push({ run, what, ok });
const doc: string[] = [];
const section = (title: string, body: string, fence = "text") => {
  doc.push(`#### ${title}`, "", `\`\`\`${fence}`, redact(body.trimEnd()), "```", "");
};

// An upstream tool without annotations: in mode auto, toolbus asks before each call of it.
const notes = await startTestServer({
  transport: "stdio",
  script: {
    tools: [
      {
        name: "write_note",
        description: "Writes a note",
        inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
      },
    ],
  },
});
testServerDir = dirname(notes.scriptPath);
const port = await freePort();
const toolbusToml = [
  "[gateway]",
  `port = ${port}`,
  'tokens_env = "TOOLBUS_TOKENS"',
  "",
  // The Codex user answers their own calls' approvals, as in Codex itself.
  "[approvals]",
  "self_approve = true",
  "",
  "[mcp_servers.notes]",
  `command = ${JSON.stringify(notes.command)}`,
  `args = ${JSON.stringify(notes.args)}`,
  "",
].join("\n");
writeFileSync(join(dir, "toolbus.toml"), toolbusToml);
// pnpm start's defaults: its own nats-server and an embedded PGlite, in this folder.
const toolbus = startToolbus(
  ["--config", join(dir, "toolbus.toml")],
  {
    NATS_URL: "",
    DATABASE_URL: "",
    TOOLBUS_TOKENS: `codex-user:caller:${userToken},transcript:approver:${observerToken}`,
  },
  dir,
);

const cleanups: Array<() => Promise<unknown> | unknown> = [];
let failure: unknown;
try {
  await until(() => toolbus.output().includes("MCP endpoint"), "toolbus's start-up announcement");
  const gateway = `http://127.0.0.1:${port}`;
  const proxy = await startRecordingProxy(new URL(`${gateway}/mcp`), userToken);
  cleanups.push(() => proxy.close());
  const events = await watchGatewayEvents(gateway, observerToken);
  cleanups.push(() => events.close());
  const model = await startScriptedModel({ namespace: "mcp__toolbus", tool: "notes__write_note" });
  cleanups.push(() => model.close());

  const codexToml = [
    'model = "scripted"',
    'model_provider = "scripted"',
    "",
    "[model_providers.scripted]",
    'name = "scripted model on loopback"',
    `base_url = ${JSON.stringify(model.baseUrl)}`,
    'wire_api = "responses"',
    "",
    "[mcp_servers.toolbus]",
    `url = ${JSON.stringify(proxy.url)}`,
    'bearer_token_env_var = "TOOLBUS_TOKEN"',
    "# toolbus asks for approval itself, by elicitation; Codex's own MCP approval would ask twice.",
    'default_tools_approval_mode = "approve"',
    "",
  ].join("\n");
  writeFileSync(join(codexHome, "config.toml"), codexToml);
  const codexEnv: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "",
    HOME: join(dir, "home"),
    CODEX_HOME: codexHome,
    TOOLBUS_TOKEN: userToken,
  };
  const version = execFileSync(codex, ["--version"], {
    env: codexEnv,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
  const commit = gitCommit();

  doc.push(
    "# Codex CLI through toolbus: a recorded session",
    "",
    "Written by `bash scripts/codex-transcript.sh` (run it again to regenerate this file). Paths are shortened to",
    "`<checkout>` and `<tmp>`; tokens are `<token>`. Everything else is as it happened.",
    "",
    `- Codex: \`${version}\` (npm \`@openai/codex\`, installed by the script)`,
    `- toolbus: commit \`${commit}\`, run as \`pnpm start\` runs (its own nats-server, embedded PGlite)`,
    "- the model: a scripted OpenAI Responses API endpoint on loopback (`test/real-clients/scripted-model.ts`):",
    "  it calls `notes__write_note` with the user's text, then quotes what the tool answered",
    "- the upstream tool: `write_note` of the MCP test server, without annotations, so toolbus (mode `auto`)",
    "  asks before each call; Codex's token is the `caller` principal `codex-user`",
    "- the MCP log is taken by a pass-through on loopback between Codex and the gateway",
    "  (`test/real-clients/recording-proxy.ts`); the events are the gateway's own `GET /v1/events`",
    "",
    "## Set-up",
    "",
  );
  section("toolbus.toml", toolbusToml, "toml");
  section("What `pnpm start` announced", toolbus.output());
  section("$CODEX_HOME/config.toml", codexToml, "toml");

  const runs: Array<{ title: string; what: string }> = [];
  const mark = () => ({
    wire: proxy.lines.length,
    events: events.events.length,
    model: model.exchanges.length,
  });
  const since = (start: ReturnType<typeof mark>) => ({
    wire: proxy.lines.slice(start.wire),
    events: events.events.slice(start.events),
    model: model.exchanges.slice(start.model),
  });
  const ends = (list: GatewayEvent[]) => list.filter((event) => event.kind === "call.end");
  const resolved = (list: GatewayEvent[]) =>
    list.flatMap((event) => (event.kind === "approvals.resolved" ? [event.data] : []));
  /** The gateway publishes call.end just after answering: wait for the run's last ones. */
  const settle = async (start: ReturnType<typeof mark>, calls: number) => {
    await until(
      () => ends(since(start).events).length >= calls,
      `${calls} call.end event(s) on /v1/events`,
      15_000,
    ).catch(() => undefined);
    return since(start);
  };
  /** Codex's own measure of each call, from the tool outputs it sent the model. */
  const wallTimes = (seen: ReturnType<typeof since>) =>
    seen.model.flatMap((exchange) => {
      const match = /Wall time: ([\d.]+) seconds/.exec(exchange.answering);
      return match ? [Number(match[1])] : [];
    });
  const asked: number[] = [];
  let remembered: number[] = [];
  const writeRun = (title: string, command: string, printed: string, seen: ReturnType<typeof since>) => {
    doc.push(`## ${title}`, "", "```console", `$ ${redact(command)}`, "```", "");
    section("What Codex printed", printed);
    section(
      "The model's side (each request Codex made to the scripted endpoint)",
      seen.model
        .map(
          (exchange, index) =>
            `#${index + 1} offered from toolbus: ${exchange.offered.join(", ") || "(nothing)"}\n   answering: ${exchange.answering}\n   replied:   ${exchange.replied}`,
        )
        .join("\n"),
    );
    section(
      "MCP between Codex and the gateway (→ Codex's requests, ← the gateway's answers and requests)",
      seen.wire.map((line) => `${line.direction} ${line.text}`).join("\n"),
    );
    section("toolbus's events (GET /v1/events)", seen.events.map(describeEvent).join("\n"));
  };

  // Run 1: codex exec as it comes — approval policy never, read-only sandbox.
  {
    const title = "Run 1: `codex exec`, as it comes (approval policy never, read-only sandbox)";
    const start = mark();
    const callsBefore = (await notes.calls()).length;
    const prompt = "Write a note: hello from codex exec";
    const result = await runCodex(["exec", "--skip-git-repo-check", prompt], codexEnv);
    const seen = await settle(start, 1);
    asked.push(...wallTimes(seen));
    writeRun(title, `codex exec --skip-git-repo-check "${prompt}"`, result.printed, seen);
    check(
      title,
      "toolbus put the approval to Codex by elicitation",
      seen.wire.some((l) => l.text.includes('"method":"elicitation/create"')),
    );
    check(
      title,
      "Codex declined it (its policy never, without full access, declines)",
      seen.wire.some((l) => /"result":\{"action":"decline"/.test(l.text)),
    );
    check(
      title,
      "toolbus recorded the decline as codex-user's",
      resolved(seen.events).some((r) => r.decision === "denied" && r.by === "codex-user"),
    );
    check(title, "the upstream server never saw the call", (await notes.calls()).length === callsBefore);
    check(title, "Codex printed the refusal", result.printed.includes("user rejected MCP tool call"));
    runs.push({ title, what: "declined by Codex's policy; nothing ran" });
  }

  // Run 2: codex exec with full access — never + full access accepts an empty form.
  {
    const title = "Run 2: `codex exec --sandbox danger-full-access` (approval policy never, full access)";
    const start = mark();
    const callsBefore = (await notes.calls()).length;
    const prompt = "Write a note: hello with full access";
    const result = await runCodex(
      ["exec", "--skip-git-repo-check", "--sandbox", "danger-full-access", prompt],
      codexEnv,
    );
    const seen = await settle(start, 1);
    asked.push(...wallTimes(seen));
    writeRun(
      title,
      `codex exec --skip-git-repo-check --sandbox danger-full-access "${prompt}"`,
      result.printed,
      seen,
    );
    check(
      title,
      "Codex accepted the elicitation with {}",
      seen.wire.some((l) => /"result":\{"action":"accept","content":\{\}/.test(l.text)),
    );
    check(
      title,
      "toolbus recorded an approval for this call only, by codex-user",
      resolved(seen.events).some((r) => r.decision === "approved" && r.by === "codex-user"),
    );
    check(title, "the upstream server ran the call once", (await notes.calls()).length === callsBefore + 1);
    check(
      title,
      "Codex printed the tool's answer",
      result.printed.includes(JSON.stringify({ text: prompt })),
    );
    runs.push({ title, what: "allowed once (accept {}); the tool ran" });
  }

  // Run 3: codex app-server, its user choosing "Allow and don't ask me again", then a second turn.
  {
    const title =
      "Run 3: `codex app-server` (approval policy on-request), the user allows for this session and is not asked again";
    const start = mark();
    const callsBefore = (await notes.calls()).length;
    const prompts = ["Write a note: first, asked", "Write a note: second, remembered"];
    const run = await runAppServer({
      codex,
      cwd: work,
      env: codexEnv,
      prompts,
      // The user's pick among the options the elicitation's `_meta.persist` offers.
      answer: () => ({ action: "accept", content: null, _meta: { persist: "session" } }),
      timeoutMs: RUN_TIMEOUT_MS,
    });
    const seen = await settle(start, 2);
    const [first, ...rest] = wallTimes(seen);
    if (first !== undefined) asked.push(first);
    remembered = rest;
    writeRun(
      title,
      "codex app-server   # driven over stdio JSON-RPC as the IDE extension drives it (test/real-clients/codex-app-server.ts)",
      `${run.lines.join("\n")}\n\n(stderr)\n${run.stderr}`,
      seen,
    );
    const offered = run.elicitations[0]?._meta as { persist?: unknown } | undefined;
    check(
      title,
      "Codex forwarded toolbus's approval to its user once, for the first call only",
      run.elicitations.length === 1,
    );
    check(
      title,
      "the elicitation offered Allow for this session and Allow and don't ask me again (persist: session, always)",
      JSON.stringify(offered?.persist) === '["session","always"]',
    );
    check(
      title,
      "Codex passed the user's _meta.persist on to toolbus",
      seen.wire.some((l) => /"_meta":\{"persist":"session"\}/.test(l.text)),
    );
    check(
      title,
      "toolbus recorded approved_for_session by codex-user",
      resolved(seen.events).some((r) => r.decision === "approved_for_session" && r.by === "codex-user"),
    );
    check(title, "both turns completed", run.turns.join(",") === "completed,completed");
    check(title, "the upstream server ran both calls", (await notes.calls()).length === callsBefore + 2);
    runs.push({
      title,
      what: "asked once, answered allow for this session; the second call, in the same thread, ran without asking",
    });
  }

  doc.splice(
    doc.indexOf("## Set-up"),
    0,
    "## Outcome",
    "",
    ...runs.map((run) => `- ${run.title}: ${run.what}.`),
    "",
    "| run | check | |",
    "| --- | --- | --- |",
    ...checks.map((c) => `| ${c.run.split(":")[0]} | ${c.what} | ${c.ok ? "ok" : "FAILED"} |`),
    "",
    "Reading it:",
    "",
    "- `codex exec` has no one to ask. It answers toolbus's approval elicitation by its own policy",
    "  (the reference behaviour, docs/reference-behavior.md §5.7): approval policy `never` (exec's default) without full access declines;",
    "  with full access it accepts the empty form with `{}`, which toolbus reads as Allow, for that call only.",
    "- `codex app-server` puts the elicitation to its user with toolbus's options (`_meta.persist`) and passes",
    "  the user's `_meta.persist` back: \"Allow for this session\" became toolbus's `approved_for_session`,",
    "  a grant for the call's thread (Codex's `_meta.threadId`), and the next call in that thread ran without",
    "  a question (no `approvals.pending`, no `elicitation/create`).",
    `- Codex measured ${asked.map((t) => `${t} s`).join(", ")} for the calls toolbus asked about and ${remembered.map((t) => `${t} s`).join(", ") || "nothing"} for the remembered one.`,
    "",
  );
} catch (error) {
  failure = error;
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
  toolbus.child.kill("SIGINT");
  await exited(toolbus.child);
  await notes.dispose();
  rmSync(dir, { recursive: true, force: true });
}

if (failure !== undefined) {
  console.error(redact(toolbus.output().slice(-3_000)));
  throw failure;
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${doc.join("\n").trimEnd()}\n`);
for (const c of checks) console.log(`${c.ok ? "ok     " : "FAILED "} ${c.run.split(":")[0]}: ${c.what}`);
console.log(`transcript written to ${out}`);
if (checks.some((c) => !c.ok)) process.exit(1);

/** One `codex` run with stdin closed, bounded by RUN_TIMEOUT_MS; stdout then stderr. */
function runCodex(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; printed: string }> {
  return new Promise((resolve) => {
    const child = spawn(codex!, args, { cwd: work, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), RUN_TIMEOUT_MS);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, printed: `(stdout)\n${stdout}\n(stderr)\n${stderr}\n(exit code ${code})` });
    });
  });
}

function gitCommit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}
