import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COMMANDS, GLOBAL_OPTIONS } from "../src/core/commands.js";
import { ExitCode } from "../src/core/exit-codes.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

describe("README.md", () => {
  it("shows every usage form of every command", () => {
    const forms = COMMANDS.flatMap((c) => c.usage.map((form) => `toolbus ${form}`));
    expect(forms.filter((form) => !readme.includes(`\`${form}\``))).toEqual([]);
  });

  it("names every option", () => {
    const options = [...COMMANDS.flatMap((c) => c.options), ...GLOBAL_OPTIONS].map((o) => `--${o.name}`);
    expect(options.filter((option) => !readme.includes(option))).toEqual([]);
  });

  it("documents exactly the exit codes the CLI uses", () => {
    const documented = [
      ...readme
        .split("## Exit codes")[1]!
        .split("\n## ")[0]!
        .matchAll(/^\| (\d+) +\|/gm),
    ].map((m) => Number(m[1]));
    expect(documented).toEqual(Object.values(ExitCode).sort((a, b) => a - b));
  });
});
