import type { CallEndStatus, CallToolResult, CallOutcome as EventResult } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import type { ResultOrError } from "../../src/core/call-outcome.js";
import { EVENT_RESULT_MAX_BYTES, endStatus, eventResultCopy } from "../../src/core/event-copy.js";
import { utf8Length } from "../../src/core/truncate.js";

const serializedSize = (value: unknown) => utf8Length(JSON.stringify(value));
/** The Ok side of an event copy, failing the test when it is an Err. */
function okOf(copy: EventResult): CallToolResult {
  if (!("ok" in copy)) throw new Error(`expected an ok copy, got ${JSON.stringify(copy).slice(0, 200)}`);
  return copy.ok;
}
function textOf(result: CallToolResult): string {
  const [block] = result.content;
  return block?.type === "text" && typeof block.text === "string" ? block.text : "";
}

describe("[43] endStatus", () => {
  it.each<{ name: string; outcome: ResultOrError; status: CallEndStatus }>([
    { name: "a result without isError completed", outcome: { content: [] }, status: "completed" },
    { name: "isError false completed", outcome: { content: [], isError: false }, status: "completed" },
    { name: "isError true failed", outcome: { content: [], isError: true }, status: "failed" },
    { name: "an error text failed", outcome: { error: "boom" }, status: "failed" },
  ])("$name", ({ outcome, status }) => {
    expect(endStatus(outcome)).toBe(status);
  });
});

describe("eventResultCopy", () => {
  it("keeps a small result unchanged, structuredContent and _meta included (§11 test 27)", () => {
    const result: CallToolResult = {
      content: [{ type: "text", text: "hello" }],
      structuredContent: { x: 1 },
      isError: false,
      _meta: { k: "v" },
    };
    expect(eventResultCopy(result)).toEqual({ ok: result });
  });

  it("[44 differs] keeps a small error unchanged", () => {
    expect(eventResultCopy({ error: "tool call error: boom" })).toEqual({ err: "tool call error: boom" });
  });

  it("keeps a result whose JSON is exactly 1 MiB, and previews one a byte larger", () => {
    const empty = JSON.stringify({ content: [{ type: "text", text: "" }] }).length;
    const exact: CallToolResult = {
      content: [{ type: "text", text: "a".repeat(EVENT_RESULT_MAX_BYTES - empty) }],
    };
    const over: CallToolResult = {
      content: [{ type: "text", text: "a".repeat(EVENT_RESULT_MAX_BYTES - empty + 1) }],
    };
    const overCopy = eventResultCopy(over);
    expect({
      exact: eventResultCopy(exact),
      overKeptWhole: "ok" in overCopy && overCopy.ok === over,
    }).toEqual({
      exact: { ok: exact },
      overKeptWhole: false,
    });
  });

  it("[45] turns a result over 1 MiB into one text preview, dropping structuredContent and _meta", () => {
    const original: CallToolResult = {
      content: [{ type: "text", text: "long-message-with-newlines-\n".repeat(200_000) }],
      structuredContent: { structured: "structured-value-".repeat(200_000) },
      isError: false,
      _meta: { meta: "meta-value-".repeat(200_000) },
    };
    const serialized = JSON.stringify(original);
    const copy = okOf(eventResultCopy(original));
    const preview = textOf(copy);
    const [head = "", tail = ""] = preview.split(/…\d+ chars truncated…/);
    expect(copy).toEqual({ content: [{ type: "text", text: preview }], isError: false });
    expect({
      withinCap: serializedSize(copy) <= EVENT_RESULT_MAX_BYTES,
      nearlyFull: serializedSize(copy) > EVENT_RESULT_MAX_BYTES - 1024,
      headIsPrefix: head.length > 0 && serialized.startsWith(head),
      tailIsSuffix: tail.length > 0 && serialized.endsWith(tail),
    }).toEqual({ withinCap: true, nearlyFull: true, headIsPrefix: true, tailIsSuffix: true });
  });

  it("keeps isError on a large failed result and leaves it out when the result had none", () => {
    const big = "e".repeat(EVENT_RESULT_MAX_BYTES);
    const failed = okOf(eventResultCopy({ content: [{ type: "text", text: big }], isError: true }));
    const plain = okOf(eventResultCopy({ content: [{ type: "text", text: big }] }));
    expect({ failed, plain }).toStrictEqual({
      failed: { content: [{ type: "text", text: textOf(failed) }], isError: true },
      plain: { content: [{ type: "text", text: textOf(plain) }] },
    });
  });

  it("middle-truncates a large error to the cap (§11 test 29)", () => {
    const message = "error-message-".repeat(200_000);
    const copy = eventResultCopy({ error: message });
    const err = "err" in copy ? copy.err : "";
    expect({
      withinCap: serializedSize(err) <= EVENT_RESULT_MAX_BYTES,
      nearlyFull: serializedSize(err) > EVENT_RESULT_MAX_BYTES - 1024,
      marker: /…\d+ chars truncated…/.test(err),
      starts: err.startsWith("error-message-"),
      ends: err.endsWith("error-message-"),
    }).toEqual({ withinCap: true, nearlyFull: true, marker: true, starts: true, ends: true });
  });

  it("shrinks the preview until its JSON, marker and quotes included, fits the cap", () => {
    expect(eventResultCopy({ error: "x".repeat(100) }, 40)).toEqual({
      err: "xxxxxxx…86 chars truncated…xxxxxxx",
    });
  });

  it("accounts for escaping when a preview is embedded in JSON again", () => {
    const quotes: CallToolResult = { content: [{ type: "text", text: '"'.repeat(3_000) }] };
    const copy = eventResultCopy(quotes, 1_000);
    expect({
      withinCap: serializedSize(copy) - '{"ok":}'.length <= 1_000,
      nearlyFull: serializedSize(copy) > 900,
    }).toEqual({
      withinCap: true,
      nearlyFull: true,
    });
  });
});
