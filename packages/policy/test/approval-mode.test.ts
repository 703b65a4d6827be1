import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { approvalModeOf, approvalRequired, resolveApprovalMode } from "../src/approval-mode.js";
import type { ApprovalMode, ToolAnnotations } from "../src/types.js";

const annotationsArb: fc.Arbitrary<ToolAnnotations | undefined> = fc.option(
  fc.record(
    { readOnlyHint: fc.boolean(), destructiveHint: fc.boolean(), openWorldHint: fc.boolean() },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);

describe("[31][32] whether a call needs approval", () => {
  it.each<{ name: string; mode: ApprovalMode; annotations?: ToolAnnotations; required: boolean }>([
    { name: "auto: no annotations prompt", mode: "auto", required: true },
    { name: "auto: empty annotations prompt", mode: "auto", annotations: {}, required: true },
    {
      name: "auto: readOnly alone needs none",
      mode: "auto",
      annotations: { readOnlyHint: true },
      required: false,
    },
    {
      name: "auto: destructive prompts even when readOnly",
      mode: "auto",
      annotations: { readOnlyHint: true, destructiveHint: true },
      required: true,
    },
    {
      name: "auto: readOnly=false with destructive prompts",
      mode: "auto",
      annotations: { readOnlyHint: false, destructiveHint: true },
      required: true,
    },
    {
      name: "auto: readOnly=false with openWorld prompts",
      mode: "auto",
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
      required: true,
    },
    {
      name: "auto: readOnly=false with openWorld absent prompts",
      mode: "auto",
      annotations: { readOnlyHint: false, destructiveHint: false },
      required: true,
    },
    {
      name: "auto: readOnly=false with destructive absent prompts",
      mode: "auto",
      annotations: { readOnlyHint: false, openWorldHint: false },
      required: true,
    },
    {
      name: "auto: a closed-world, non-destructive tool needs none",
      mode: "auto",
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
      required: false,
    },
    {
      name: "writes: readOnly needs none",
      mode: "writes",
      annotations: { readOnlyHint: true },
      required: false,
    },
    {
      name: "writes: readOnly wins over destructive",
      mode: "writes",
      annotations: { readOnlyHint: true, destructiveHint: true },
      required: false,
    },
    {
      name: "writes: a closed-world, non-destructive tool still prompts",
      mode: "writes",
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
      required: true,
    },
    { name: "writes: no annotations prompt", mode: "writes", required: true },
    {
      name: "prompt: readOnly still prompts",
      mode: "prompt",
      annotations: { readOnlyHint: true },
      required: true,
    },
    {
      name: "approve: destructive needs none",
      mode: "approve",
      annotations: { destructiveHint: true },
      required: false,
    },
    { name: "approve: no annotations need none", mode: "approve", required: false },
  ])("$name", ({ mode, annotations, required }) => {
    expect(approvalRequired(mode, annotations)).toBe(required);
  });

  it("never requires approval in mode approve and always in mode prompt, whatever the annotations", () => {
    fc.assert(
      fc.property(annotationsArb, (annotations) => {
        expect(approvalRequired("approve", annotations)).toBe(false);
        expect(approvalRequired("prompt", annotations)).toBe(true);
      }),
    );
  });

  it("never asks for a read-only, non-destructive tool in auto or writes", () => {
    fc.assert(
      fc.property(fc.boolean(), fc.constantFrom<ApprovalMode>("auto", "writes"), (openWorld, mode) => {
        const annotations = { readOnlyHint: true, destructiveHint: false, openWorldHint: openWorld };
        expect(approvalRequired(mode, annotations)).toBe(false);
      }),
    );
  });
});

describe("[33] which mode applies to a tool", () => {
  it.each<{ tool?: ApprovalMode; server?: ApprovalMode; mode: ApprovalMode }>([
    { tool: "approve", server: "prompt", mode: "approve" },
    { server: "writes", mode: "writes" },
    { tool: "prompt", mode: "prompt" },
    { mode: "auto" },
  ])("tool $tool over server $server gives $mode", ({ tool, server, mode }) => {
    expect(resolveApprovalMode(tool, server)).toBe(mode);
  });
});

describe("approvalModeOf", () => {
  const servers = {
    docs: {
      defaultToolsApprovalMode: "writes" as const,
      tools: { search: { approvalMode: "approve" as const }, other: {} },
    },
  };
  it.each([
    ["a tool's own mode", "docs", "search", "approve"],
    ["the server default for a tool without one", "docs", "other", "writes"],
    ["the server default for an unlisted tool", "docs", "fetch", "writes"],
    ["auto for an unconfigured server", "web", "search", "auto"],
    ["auto for a server named like an Object property", "constructor", "toString", "auto"],
  ])("gives %s", (_name, server, tool, mode) => {
    expect(approvalModeOf(servers, server, tool)).toBe(mode);
  });
});
