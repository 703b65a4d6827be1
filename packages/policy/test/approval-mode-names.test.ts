/**
 * The approval modes' second names, and the root README's table of the modes: each alias is read
 * as the mode it names and behaves as its name says, and the table lists exactly the code's modes
 * and aliases, each with what `APPROVAL_MODE_MEANINGS` says of it.
 */
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApprovalModeSchema, approvalRequired } from "../src/approval-mode.js";
import {
  APPROVAL_MODE_ALIASES,
  APPROVAL_MODE_MEANINGS,
  APPROVAL_MODES,
  type ToolAnnotations,
} from "../src/types.js";

const annotationsArb: fc.Arbitrary<ToolAnnotations | undefined> = fc.option(
  fc.record(
    { readOnlyHint: fc.boolean(), destructiveHint: fc.boolean(), openWorldHint: fc.boolean() },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

const asked = (alias: string, annotations: ToolAnnotations | undefined) =>
  approvalRequired(ApprovalModeSchema.parse(alias), annotations);

describe("the approval modes' names that say what they do", () => {
  it("reads each alias as the reference mode it names, and each mode as itself", () => {
    expect(Object.keys(APPROVAL_MODE_ALIASES).map((alias) => ApprovalModeSchema.parse(alias))).toEqual([
      "auto",
      "prompt",
      "writes",
      "approve",
    ]);
    expect(APPROVAL_MODES.map((mode) => ApprovalModeSchema.parse(mode))).toEqual([...APPROVAL_MODES]);
  });

  it("behaves as each name says, whatever the tool's annotations", () => {
    fc.assert(
      fc.property(annotationsArb, (annotations) => {
        expect(asked("never_ask", annotations)).toBe(false);
        expect(asked("always_ask", annotations)).toBe(true);
        expect(asked("ask_unless_read_only", annotations)).toBe(annotations?.readOnlyHint !== true);
        // Safe: read-only and not destructive, or neither destructive nor open-world.
        const safe =
          annotations !== undefined &&
          annotations.destructiveHint !== true &&
          (annotations.readOnlyHint === true ||
            (annotations.destructiveHint === false && annotations.openWorldHint === false));
        expect(asked("ask_unless_safe", annotations)).toBe(!safe);
      }),
    );
  });

  it("refuses any other name", () => {
    expect(ApprovalModeSchema.safeParse("ask").success).toBe(false);
    expect(ApprovalModeSchema.safeParse("never").success).toBe(false);
  });
});

describe("the root README's table of approval modes", () => {
  const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
  /** `| \`auto\` (default) | \`ask_unless_safe\` | asks unless … |` → [mode, alias, meaning]. */
  const rows = [...readme.matchAll(/^\| `([a-z_]+)`[^|]*\| `([a-z_]+)` +\| ([^|]+?) +\|$/gm)].map((m) => [
    m[1],
    m[2],
    m[3],
  ]);

  it("lists every mode with its alias and what it does, as the code has them", () => {
    expect(rows).toEqual(
      APPROVAL_MODES.map((mode) => [
        mode,
        Object.entries(APPROVAL_MODE_ALIASES).find(([, target]) => target === mode)?.[0],
        APPROVAL_MODE_MEANINGS[mode],
      ]),
    );
  });
});
