import { describe, expect, it } from "vitest";
import {
  type HooksConfig,
  hookLabel,
  hookTimeoutMs,
  matchingHooks,
  NO_HOOKS,
  parseHooksFile,
} from "../src/hooks-file.js";

const guard = { type: "command", command: "./guard.sh", timeout: 5 } as const;
const audit = {
  type: "http",
  url: "https://audit.example/hook",
  headers: { Authorization: "Bearer $T" },
} as const;

function config(value: unknown): HooksConfig {
  const parsed = parseHooksFile(value);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.value;
}

describe("reading a hooks file", () => {
  it("reads the Claude Code settings form, ignoring events and settings toolbus does not use", () => {
    const parsed = parseHooksFile({
      permissions: { allow: ["Bash"] },
      hooks: {
        PreToolUse: [{ matcher: "mcp__docs__.*", hooks: [guard] }],
        PermissionRequest: [{ hooks: [audit] }],
        Stop: [{ hooks: [{ type: "prompt", prompt: "done?" }] }],
      },
    });
    expect(parsed).toStrictEqual({
      ok: true,
      value: {
        PreToolUse: [{ matcher: "mcp__docs__.*", hooks: [guard] }],
        PermissionRequest: [{ hooks: [audit] }],
        PostToolUse: [],
      },
    });
  });

  it("reads the bare form without the hooks wrapper", () => {
    expect(parseHooksFile({ PostToolUse: [{ matcher: "*", hooks: [guard] }] })).toStrictEqual({
      ok: true,
      value: { PreToolUse: [], PermissionRequest: [], PostToolUse: [{ matcher: "*", hooks: [guard] }] },
    });
  });

  it("reads an empty file as no hooks", () => {
    expect(parseHooksFile({})).toStrictEqual({ ok: true, value: NO_HOOKS });
  });

  it.each([
    {
      name: "an invalid matcher regex is named with its place in the file",
      file: { hooks: { PreToolUse: [{ matcher: "mcp__(docs", hooks: [guard] }] } },
      message:
        'hooks.PreToolUse.0.matcher: invalid matcher "mcp__(docs": Invalid regular expression: /mcp__(docs/: Unterminated group',
    },
    {
      name: "a matcher that is only valid once anchored is still refused",
      file: { PermissionRequest: [{ matcher: "a)|(.*", hooks: [guard] }] },
      message:
        "PermissionRequest.0.matcher: invalid matcher \"a)|(.*\": Invalid regular expression: /a)|(.*/: Unmatched ')'",
    },
    {
      name: "a hook type toolbus cannot run is refused",
      file: { hooks: { PreToolUse: [{ hooks: [{ type: "prompt", prompt: "ok?" }] }] } },
      message:
        'hooks.PreToolUse.0.hooks.0.type: hook type "prompt" is not supported; use "command" or "http" (toolbus runs no prompt, agent or mcp_tool hooks)',
    },
    {
      name: "a hook without a type is refused",
      file: { PreToolUse: [{ hooks: [{ command: "./guard.sh" }] }] },
      message:
        'PreToolUse.0.hooks.0.type: hook type is missing; use "command" or "http" (toolbus runs no prompt, agent or mcp_tool hooks)',
    },
    {
      name: "a command hook without a command is refused",
      file: { PreToolUse: [{ hooks: [{ type: "command", command: "" }] }] },
      message: "PreToolUse.0.hooks.0.command: Too small: expected string to have >=1 characters",
    },
    {
      name: "a non-positive timeout is refused",
      file: { PreToolUse: [{ hooks: [{ type: "command", command: "x", timeout: 0 }] }] },
      message: "PreToolUse.0.hooks.0.timeout: Too small: expected number to be >0",
    },
  ])("$name", ({ file, message }) => {
    expect(parseHooksFile(file)).toStrictEqual({ ok: false, message });
  });
});

describe("which hooks run for a hook name", () => {
  const second = { type: "command", command: "./second.sh" } as const;
  const file = config({
    PreToolUse: [
      { matcher: "mcp__docs__.*", hooks: [guard] },
      { matcher: "mcp__docs__search|mcp__gh__list", hooks: [second, guard] },
      { matcher: "docs", hooks: [audit] },
      { matcher: "*", hooks: [audit] },
    ],
    PostToolUse: [{ matcher: "", hooks: [second] }, { hooks: [guard] }],
  });

  it.each([
    { name: "mcp__docs__search", event: "PreToolUse", hooks: [guard, second, audit] },
    { name: "mcp__docs__delete", event: "PreToolUse", hooks: [guard, audit] },
    { name: "mcp__gh__list", event: "PreToolUse", hooks: [second, guard, audit] },
    { name: "mcp__gh__list_all", event: "PreToolUse", hooks: [audit] },
    { name: "mcp__gh__list", event: "PostToolUse", hooks: [second, guard] },
    { name: "mcp__gh__list", event: "PermissionRequest", hooks: [] },
  ] as const)("$event on $name runs $hooks.length hooks", ({ name, event, hooks }) => {
    expect(matchingHooks(file, event, name)).toStrictEqual(hooks);
  });

  it("anchors a matcher on the whole hook name", () => {
    const anchored = config({ PreToolUse: [{ matcher: "docs", hooks: [guard] }] });
    expect(matchingHooks(anchored, "PreToolUse", "mcp__docs__search")).toStrictEqual([]);
    expect(matchingHooks(anchored, "PreToolUse", "docs")).toStrictEqual([guard]);
  });
});

describe("naming and timing a hook", () => {
  it.each([
    { hook: guard, label: "./guard.sh", timeoutMs: 5000 },
    { hook: audit, label: "https://audit.example/hook", timeoutMs: 600_000 },
  ])("$label", ({ hook, label, timeoutMs }) => {
    expect({ label: hookLabel(hook), timeoutMs: hookTimeoutMs(hook) }).toStrictEqual({ label, timeoutMs });
  });
});
