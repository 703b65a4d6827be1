import { describe, expect, it } from "vitest";
import { shouldColor } from "../../src/core/ansi.js";
import { AsyncQueue } from "../../src/core/async-queue.js";
import {
  COMMANDS,
  checkPositionals,
  findCommand,
  parseCount,
  parseTimeoutSeconds,
} from "../../src/core/commands.js";
import { commandHelp, topHelp, usageText } from "../../src/core/help.js";

describe("help", () => {
  it("explains every approval mode in `toolbus start --help`, by both its names", () => {
    const lines = commandHelp(findCommand("start")!)
      .split("\n")
      .filter((line) => / = \w+: /.test(line))
      .map((line) => line.trim().split(":")[0]);
    expect(lines).toEqual([
      "auto = ask_unless_safe",
      "prompt = always_ask",
      "writes = ask_unless_read_only",
      "approve = never_ask",
    ]);
  });

  it("lists every command of the table in the top-level help", () => {
    const listed = topHelp()
      .split("Commands:\n")[1]
      ?.split("\n\n")[0]
      ?.split("\n")
      .map((line) => line.trim().split(" ")[0]);
    expect(listed).toEqual(COMMANDS.map((c) => c.name));
  });

  it.each(COMMANDS.map((c) => [c.name, c] as const))("documents every option of %s", (_name, command) => {
    const help = commandHelp(command);
    const missing = [...command.options, { name: "json" }, { name: "timeout" }, { name: "help" }].filter(
      (o) => !help.includes(`--${o.name}`),
    );
    expect(missing).toEqual([]);
  });

  it("prints a command's usage forms and where to read more after a usage error", () => {
    expect(usageText(findCommand("approvals"))).toBe(
      [
        "Usage: toolbus approvals [options]",
        "       toolbus approvals answer <requestId> <choice> [options]",
        "       toolbus approvals --watch [options]",
        "Run `toolbus approvals --help` for details.",
        "",
      ].join("\n"),
    );
  });
});

describe("argument checks", () => {
  const call = findCommand("call")!;
  const servers = findCommand("servers")!;

  it.each([
    [call, ["t"], { ok: true, value: ["t"] }],
    [call, ["t", "{}"], { ok: true, value: ["t", "{}"] }],
    [call, [], { ok: false, message: "toolbus call needs <tool>" }],
    [call, ["t", "{}", "x"], { ok: false, message: 'toolbus call takes <tool> [json]; unexpected "x"' }],
    [servers, ["x"], { ok: false, message: 'toolbus servers takes no arguments; unexpected "x"' }],
  ])("checks positionals of %s: %j", (command, positionals, result) => {
    expect(checkPositionals(command, positionals)).toEqual(result);
  });

  it.each([
    ["5", { ok: true, value: 5000 }],
    ["0.25", { ok: true, value: 250 }],
    ["0", { ok: false, message: '--timeout needs a positive number of seconds, got "0"' }],
    ["", { ok: false, message: '--timeout needs a positive number of seconds, got ""' }],
    ["soon", { ok: false, message: '--timeout needs a positive number of seconds, got "soon"' }],
  ])("reads --timeout %j", (value, result) => {
    expect(parseTimeoutSeconds(value)).toEqual(result);
  });

  it.each([
    ["3", 10, { ok: true, value: 3 }],
    ["11", 10, { ok: false, message: '--limit needs a whole number from 1 to 10, got "11"' }],
    ["1.5", 10, { ok: false, message: '--limit needs a whole number from 1 to 10, got "1.5"' }],
  ])("reads --limit %j (max %i)", (value, max, result) => {
    expect(parseCount("limit", value, max)).toEqual(result);
  });
});

describe("shouldColor", () => {
  it.each([
    [true, {}, true],
    [false, {}, false],
    [true, { NO_COLOR: "1" }, false],
    [true, { NO_COLOR: "" }, true],
    [false, { FORCE_COLOR: "1" }, true],
    [true, { FORCE_COLOR: "0" }, false],
    [false, { NO_COLOR: "1", FORCE_COLOR: "1" }, false],
  ])("a stream with isTTY %s and env %j is colored: %s", (isTTY, env, colored) => {
    expect(shouldColor({ isTTY }, env)).toBe(colored);
  });
});

describe("AsyncQueue", () => {
  it("hands items to the consumer in order, whether it waits or not", async () => {
    const queue = new AsyncQueue<number>();
    queue.push(1);
    const waiting = [queue.next(), queue.next(), queue.next()];
    queue.push(2);
    queue.push(3);
    expect(await Promise.all(waiting)).toEqual([1, 2, 3]);
  });
});
