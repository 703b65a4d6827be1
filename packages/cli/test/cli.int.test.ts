/**
 * The CLI against a real toolbus: catalog and dispatcher as child processes on an isolated
 * prefix, the scriptable MCP test server as server `test`, and the CLI run as a child process.
 */

import { spawn } from "node:child_process";
import { CatalogSnapshotSchema, ToolCallReplySchema, type ToolEntry } from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_MAIN, type CliEnv, LiveCli, runCli, sourceArgs, spawnCli } from "./support/run-cli.js";
import { startToolbusStack, type ToolbusStack } from "./support/toolbus-stack.js";

const LONG_DESCRIPTION =
  "Summarizes a document in several passes, keeping headings, lists and tables, and reports how many tokens each pass used along the way.";

let stack: ToolbusStack;
let env: CliEnv;

beforeAll(async () => {
  // `never_ask`, the alias of `approve`: no call waits for anybody.
  stack = await startToolbusStack(
    "cli",
    {
      tools: [
        { name: "echo", description: "Echoes its arguments" },
        {
          name: "broken",
          description: "Always fails",
          behavior: { kind: "error_result", text: "the disk is full" },
        },
        { name: "summarize", description: LONG_DESCRIPTION, behavior: { kind: "text", text: "summary" } },
        {
          name: "steps",
          description: "Reports progress",
          behavior: { kind: "progress", count: 3, intervalMs: 300 },
        },
      ],
    },
    { approvalMode: "never_ask" },
  );
  env = { natsUrl: stack.natsUrl, prefix: stack.prefix };
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

async function catalog() {
  const reply = await stack.nc.request(`${stack.prefix}.catalog.get`, JSON.stringify({ exposure: "all" }));
  const envelope = reply.json<{ ok: true; result: unknown }>();
  return CatalogSnapshotSchema.parse(envelope.result);
}

/** Splits a table line into its cells (columns are two or more spaces apart). */
function cells(line: string): string[] {
  return line.trim().split(/ {2,}/);
}

describe("toolbus servers", () => {
  it("shows each server's name, status, error, required flag and revision as an aligned table", async () => {
    const { servers } = await catalog();
    const revision = String(servers[0]?.revision);
    const result = await runCli(["servers"], env);
    expect(result).toEqual({
      code: 0,
      stdout: [
        `name  status  error  required  ${"revision".padStart(revision.length)}`,
        `test  ready          no        ${revision.padStart(8)}`,
        "",
      ].join("\n"),
      stderr: "",
    });
  });

  it("prints the server list as JSON with --json", async () => {
    const { servers } = await catalog();
    const result = await runCli(["servers", "--json"], env);
    expect({ code: result.code, servers: JSON.parse(result.stdout), stderr: result.stderr }).toEqual({
      code: 0,
      servers,
      stderr: "",
    });
  });
});

describe("toolbus tools", () => {
  it("lists every tool the model sees by the name MCP clients see, with server and description", async () => {
    const result = await runCli(["tools"], env);
    const [header, ...rows] = result.stdout.trimEnd().split("\n");
    expect({ code: result.code, header: cells(header ?? ""), rows: rows.map(cells).sort() }).toEqual({
      code: 0,
      header: ["name", "server", "description"],
      rows: [
        ["test__broken", "test", "Always fails"],
        ["test__echo", "test", "Echoes its arguments"],
        ["test__steps", "test", "Reports progress"],
        ["test__summarize", "test", LONG_DESCRIPTION],
      ],
    });
  });

  it("adds how each tool reaches the model with --all", async () => {
    const result = await runCli(["tools", "--all"], env);
    const [header, ...rows] = result.stdout.trimEnd().split("\n");
    expect({
      header: cells(header ?? ""),
      echo: rows.map(cells).find((row) => row[0] === "test__echo"),
    }).toEqual({
      header: ["name", "server", "description", "exposure"],
      echo: ["test__echo", "test", "Echoes its arguments", "direct"],
    });
  });

  it("searches with a query and lists only the matching tools, by the same names", async () => {
    const result = await runCli(["tools", "echoes"], env);
    const rows = result.stdout.trimEnd().split("\n").slice(1).map(cells);
    expect({ code: result.code, rows }).toEqual({
      code: 0,
      rows: [["test__echo", "test", "Echoes its arguments"]],
    });
  });

  it("cuts descriptions so every line fits the terminal width", async () => {
    const result = await runCli(["tools"], { ...env, extra: { COLUMNS: "80" } });
    const lines = result.stdout.trimEnd().split("\n");
    const summarize = lines.find((line) => line.startsWith("test__summarize"));
    expect({
      code: result.code,
      widest: Math.max(...lines.map((line) => [...line].length)) <= 80,
      cut: cells(summarize ?? "")[2]?.endsWith("…"),
    }).toEqual({ code: 0, widest: true, cut: true });
  });

  it("gives the description all the width the name and server leave, at 120 columns", async () => {
    const result = await runCli(["tools"], { ...env, extra: { COLUMNS: "120" } });
    const lines = result.stdout.trimEnd().split("\n");
    const summarize = lines.find((line) => line.startsWith("test__summarize")) ?? "";
    // name (15) + 2 + server (6) + 2 leave 95 columns.
    expect({ width: [...summarize].length, description: cells(summarize)[2] }).toEqual({
      width: 120,
      description: `${LONG_DESCRIPTION.slice(0, 94)}…`,
    });
  });

  it("prints the tool entries as JSON with --json, query or not, each with its exposed name", async () => {
    const { tools } = await catalog();
    const listed = await runCli(["tools", "--json"], env);
    const searched = await runCli(["tools", "echoes", "--json"], env);
    const names = (text: string) =>
      (JSON.parse(text) as ToolEntry[]).map((t) => [t.flatName, t.exposedName]).sort();
    expect({ listed: names(listed.stdout), searched: names(searched.stdout) }).toEqual({
      listed: tools.map((t) => [t.flatName, `test__${t.rawName}`]).sort(),
      searched: [["mcp__test__echo", "test__echo"]],
    });
  });
});

describe("toolbus call", { timeout: 60_000 }, () => {
  it("prints the text the tool answered and exits 0", async () => {
    const result = await runCli(["call", "test__echo", '{"text":"hi"}'], env);
    expect(result).toEqual({ code: 0, stdout: '{"text":"hi"}\n', stderr: "" });
  });

  it.each([
    ["the catalog's flat name", "mcp__test__echo"],
    ["server.tool", "test.echo"],
    ["the raw name only one server has", "echo"],
  ])("takes %s for the same tool", async (_spelling, typed) => {
    const result = await runCli(["call", typed, '{"text":"hi"}', "--json"], env);
    const reply = ToolCallReplySchema.parse(JSON.parse(result.stdout));
    expect({ code: result.code, status: reply.status, tool: reply.tool }).toEqual({
      code: 0,
      status: "completed",
      tool: "echo",
    });
  });

  it("calls nothing for a name that matches no tool, and suggests the closest", async () => {
    const before = (await stack.server.calls()).length;
    const result = await runCli(["call", "test__ecoh", "{}"], env);
    expect({
      ...result,
      calls: (await stack.server.calls()).length - before,
    }).toEqual({
      code: 1,
      stdout: "",
      stderr:
        'toolbus: no tool is named "test__ecoh"; did you mean test__echo? (`toolbus tools` lists every tool)\n',
      calls: 0,
    });
  });

  it("prints the raw MCP result with --raw", async () => {
    const result = await runCli(["call", "mcp__test__echo", '{"text":"hi"}', "--raw"], env);
    expect({ code: result.code, raw: JSON.parse(result.stdout) }).toEqual({
      code: 0,
      raw: { content: [{ type: "text", text: '{"text":"hi"}' }] },
    });
  });

  it("prints the whole reply as JSON with --json", async () => {
    const result = await runCli(["call", "mcp__test__echo", '{"text":"hi"}', "--json"], env);
    const reply = ToolCallReplySchema.parse(JSON.parse(result.stdout));
    expect({
      code: result.code,
      stderr: result.stderr,
      status: reply.status,
      server: reply.server,
      tool: reply.tool,
    }).toEqual({
      code: 0,
      stderr: "",
      status: "completed",
      server: "test",
      tool: "echo",
    });
  });

  it("exits 1 when the tool returns an error result, and says so on stderr", async () => {
    const result = await runCli(["call", "test__broken", "{}"], env);
    expect(result).toEqual({
      code: 1,
      stdout: "the disk is full\n",
      stderr: "toolbus: the call failed\n",
    });
  });

  it("exits 4 and calls nothing when the arguments are not valid JSON", async () => {
    const before = (await stack.server.calls()).length;
    const result = await runCli(["call", "mcp__test__echo", "{not json"], env);
    expect({
      code: result.code,
      stderr: result.stderr,
      calls: (await stack.server.calls()).length - before,
    }).toEqual({
      code: 4,
      stderr: "toolbus: the arguments are not valid JSON; nothing was called\n",
      calls: 0,
    });
  });

  it("exits 1 when the tool is not in the catalog", async () => {
    const result = await runCli(["call", "mcp__test__missing", "{}"], env);
    expect({ code: result.code, stderr: result.stderr }).toEqual({
      code: 1,
      stderr:
        'toolbus: no tool is named "mcp__test__missing"; `toolbus tools` lists the tools you can call\n',
    });
  });

  it("shows the tool's progress on a terminal while the call runs", async () => {
    // `script` gives the CLI a pseudo-terminal, so stderr is a TTY as it is for a person.
    const command = [process.execPath, ...sourceArgs(CLI_MAIN, ["call", "test__steps", "{}"])]
      .map((arg) => `'${arg.replaceAll("'", "'\\''")}'`)
      .join(" ");
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      env: {
        ...process.env,
        NATS_URL: env.natsUrl,
        TOOLBUS_PREFIX: env.prefix,
        NO_COLOR: "1",
        COLUMNS: "100",
      },
    });
    const live = new LiveCli(child as never);
    const code = await live.exited;
    expect({
      code,
      progress: live.stdout.includes("1/3  step 1 of 3"),
      output: live.stdout.endsWith("done\r\n"),
    }).toEqual({
      code: 0,
      progress: true,
      output: true,
    });
  });
});

describe("toolbus tail", { timeout: 60_000 }, () => {
  it("prints a call's begin and end events as JSON lines with --json", async () => {
    const tail = new LiveCli(spawnCli(["tail", "--json"], env));
    await tail.waitFor("tail to listen", (o) => o.stderr.includes("Listening on"));
    const call = await runCli(["call", "mcp__test__echo", '{"n":1}', "--json"], env);
    const { callId } = ToolCallReplySchema.parse(JSON.parse(call.stdout));
    const ofCall = () =>
      tail.stdout
        .split("\n")
        .filter((line) => line.trim() !== "")
        .map(
          (line) =>
            JSON.parse(line) as {
              kind: string;
              subject: string;
              event: { callId?: string; status?: string };
            },
        )
        .filter((line) => line.event.callId === callId);
    await tail.waitFor("the end event", () => ofCall().some((line) => line.kind === "call.end"));
    tail.child.kill("SIGINT");
    expect({
      code: await tail.exited,
      lines: ofCall().map((line) => ({ kind: line.kind, subject: line.subject, status: line.event.status })),
    }).toEqual({
      code: 0,
      lines: [
        { kind: "call.begin", subject: `${stack.prefix}.events.call.begin`, status: undefined },
        { kind: "call.end", subject: `${stack.prefix}.events.call.end`, status: "completed" },
      ],
    });
  });

  it("prints one line per event with time, kind, callId, status and duration", async () => {
    const tail = new LiveCli(spawnCli(["tail", "--count", "2"], env));
    await tail.waitFor("tail to listen", (o) => o.stderr.includes("Listening on"));
    const call = await runCli(["call", "mcp__test__echo", "{}", "--json"], env);
    const { callId } = ToolCallReplySchema.parse(JSON.parse(call.stdout));
    const code = await tail.exited;
    const lines = tail.stdout.trimEnd().split("\n").map(cells);
    expect({
      code,
      lines: lines.map(([time, ...rest]) => [/^\d\d:\d\d:\d\d\.\d{3}$/.test(time ?? ""), ...rest]),
    }).toEqual({
      code: 0,
      lines: [
        [true, "call.begin", callId, "started", "test__echo"],
        [true, "call.end", callId, "completed", expect.stringMatching(/^\d+ms$/), "test__echo"],
      ],
    });
  });
});
