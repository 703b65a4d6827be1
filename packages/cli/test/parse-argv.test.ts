import { describe, expect, it } from "vitest";
import { findCommand } from "../src/core/commands.js";
import { parseArgv } from "../src/parse-argv.js";

const command = (name: string) => findCommand(name)!;

describe("parseArgv", () => {
  it.each([
    [["--help"], { kind: "help" }],
    [["-h"], { kind: "help" }],
    [["help"], { kind: "help" }],
    [["help", "call"], { kind: "help", command: command("call") }],
    [["call", "--help"], { kind: "help", command: command("call") }],
    [["--version"], { kind: "version" }],
    [["servers"], { kind: "run", command: command("servers"), positionals: [], options: {} }],
    [
      ["--json", "--timeout", "5", "servers"],
      { kind: "run", command: command("servers"), positionals: [], options: { json: true, timeout: "5" } },
    ],
    [
      ["call", "files__copy", '{"from":"a"}', "--raw"],
      {
        kind: "run",
        command: command("call"),
        positionals: ["files__copy", '{"from":"a"}'],
        options: { raw: true },
      },
    ],
    [
      ["tools", "read", "file", "--limit=3"],
      { kind: "run", command: command("tools"), positionals: ["read", "file"], options: { limit: "3" } },
    ],
    [
      ["approvals", "answer", "c1", "allow"],
      { kind: "run", command: command("approvals"), positionals: ["answer", "c1", "allow"], options: {} },
    ],
    [
      ["call", "t", "--", "-1"],
      { kind: "run", command: command("call"), positionals: ["t", "-1"], options: {} },
    ],
  ])("reads %j", (argv, parsed) => {
    expect(parseArgv(argv)).toEqual(parsed);
  });

  it.each([
    [[], { kind: "usage_error", message: "no command given" }],
    [["frob"], { kind: "usage_error", message: 'unknown command "frob"' }],
    [["help", "frob"], { kind: "usage_error", message: 'unknown command "frob"' }],
    [["--bogus"], { kind: "usage_error", message: "Unknown option '--bogus'" }],
    [
      ["servers", "--raw"],
      {
        kind: "usage_error",
        message: "Unknown option '--raw' for toolbus servers",
        command: command("servers"),
      },
    ],
    [
      ["tail", "--count"],
      {
        kind: "usage_error",
        message: "Option '--count <value>' argument missing for toolbus tail",
        command: command("tail"),
      },
    ],
    [["call"], { kind: "usage_error", message: "toolbus call needs <tool>", command: command("call") }],
  ])("refuses %j", (argv, parsed) => {
    expect(parseArgv(argv)).toEqual(parsed);
  });
});
