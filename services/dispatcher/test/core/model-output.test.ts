import type { CallToolResult, ModelOutput } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import type { ResultOrError } from "../../src/core/call-outcome.js";
import { type ProjectionOptions, projectForModel, wallTimeHeader } from "../../src/core/model-output.js";

const header = (seconds: string) => `Wall time: ${seconds} seconds\nOutput:`;
const hello: CallToolResult = { content: [{ type: "text", text: "hello" }] };
const png = { type: "image", data: "Zm9v", mimeType: "image/png" } as const;

describe("wallTimeHeader", () => {
  it.each([
    [0, "0.0000"],
    [1500, "1.5000"],
    [42, "0.0420"],
    [1234.56, "1.2346"],
    [300_000, "300.0000"],
  ])("[46] %d ms reads %s seconds", (ms, seconds) => {
    expect(wallTimeHeader(ms)).toBe(header(seconds));
  });
});

describe("projectForModel", () => {
  it.each<{ name: string; outcome: ResultOrError; options: ProjectionOptions; output: ModelOutput }>([
    {
      name: "[46] a text result starts with the wall-time header",
      outcome: hello,
      options: { wallTimeMs: 1500 },
      output: { success: true, body: `${header("1.5000")}\n[{"type":"text","text":"hello"}]` },
    },
    {
      name: "[47] the model sees only the structuredContent JSON",
      outcome: { content: [{ type: "text", text: "ignored" }], structuredContent: { x: 1 } },
      options: { wallTimeMs: 0 },
      output: { success: true, body: `${header("0.0000")}\n{"x":1}` },
    },
    {
      name: "an error text is an isError text result (§4 step 10)",
      outcome: { error: "user rejected MCP tool call" },
      options: { wallTimeMs: 0 },
      output: {
        success: false,
        body: `${header("0.0000")}\n[{"type":"text","text":"user rejected MCP tool call"}]`,
      },
    },
    {
      name: "[49] isError true gives success false",
      outcome: { ...hello, isError: true },
      options: { wallTimeMs: 0 },
      output: { success: false, body: `${header("0.0000")}\n[{"type":"text","text":"hello"}]` },
    },
    {
      name: "[48] an image gives content items with the header first",
      outcome: { content: [png] },
      options: { wallTimeMs: 250 },
      output: {
        success: true,
        body: [
          { type: "input_text", text: header("0.2500") },
          { type: "input_image", imageUrl: "data:image/png;base64,Zm9v", detail: "high" },
        ],
      },
    },
    {
      name: "[48] a model without images gets the placeholder as text",
      outcome: { content: [png] },
      options: { wallTimeMs: 250, model: { images: false } },
      output: {
        success: true,
        body: `${header("0.2500")}\n[{"type":"text","text":"<image content omitted because you do not support image input>"}]`,
      },
    },
    {
      name: "audio reaches a model that takes audio",
      outcome: { content: [{ type: "audio", data: "YmFy", mimeType: "audio/wav" }] },
      options: { wallTimeMs: 0, model: { audio: true } },
      output: {
        success: true,
        body: [
          { type: "input_text", text: header("0.0000") },
          { type: "input_audio", data: "data:audio/wav;base64,YmFy" },
        ],
      },
    },
  ])("$name", ({ outcome, options, output }) => {
    expect(projectForModel(outcome, options)).toEqual(output);
  });

  it("[49] middle-truncates a long text to the policy × 1.2 with a chars marker", () => {
    const text = "x".repeat(500);
    const full = `${header("0.0000")}\n${JSON.stringify([{ type: "text", text }])}`;
    const budget = Math.ceil(100 * 1.2);
    expect(
      projectForModel(
        { content: [{ type: "text", text }] },
        { wallTimeMs: 0, model: { truncation: { mode: "bytes", limit: 100 } } },
      ),
    ).toEqual({
      success: true,
      body: `${full.slice(0, budget / 2)}…${full.length - budget} chars truncated…${full.slice(-budget / 2)}`,
    });
  });

  it("[49] counts removed tokens in tokens mode", () => {
    const text = "y".repeat(500);
    const full = `${header("0.0000")}\n${JSON.stringify([{ type: "text", text }])}`;
    const budgetBytes = Math.ceil(25 * 1.2) * 4;
    expect(
      projectForModel(
        { content: [{ type: "text", text }] },
        { wallTimeMs: 0, model: { truncation: { mode: "tokens", limit: 25 } } },
      ),
    ).toEqual({
      success: true,
      body: `${full.slice(0, budgetBytes / 2)}…${Math.ceil((full.length - budgetBytes) / 4)} tokens truncated…${full.slice(-budgetBytes / 2)}`,
    });
  });

  it("uses bytes:10000 × 1.2 by default", () => {
    const fits = "a".repeat(12_000 - header("0.0000").length - 1 - '[{"type":"text","text":""}]'.length);
    const fitting = projectForModel({ content: [{ type: "text", text: fits }] }, { wallTimeMs: 0 });
    const over = projectForModel({ content: [{ type: "text", text: `${fits}a` }] }, { wallTimeMs: 0 });
    expect({ fitting: fitting.body, overMarker: /…1 chars truncated…/.test(over.body as string) }).toEqual({
      fitting: `${header("0.0000")}\n[{"type":"text","text":"${fits}"}]`,
      overMarker: true,
    });
  });

  it("shares the budget across items, header included", () => {
    const outcome: CallToolResult = {
      content: [{ type: "text", text: "a".repeat(40) }, png, { type: "text", text: "tail" }],
    };
    const budget = Math.ceil(50 * 1.2);
    const left = budget - header("0.0000").length;
    expect(
      projectForModel(outcome, { wallTimeMs: 0, model: { truncation: { mode: "bytes", limit: 50 } } }),
    ).toEqual({
      success: true,
      body: [
        { type: "input_text", text: header("0.0000") },
        {
          type: "input_text",
          text: `${"a".repeat(Math.floor(left / 2))}…${40 - left} chars truncated…${"a".repeat(left - Math.floor(left / 2))}`,
        },
        { type: "input_image", imageUrl: "data:image/png;base64,Zm9v", detail: "high" },
        { type: "input_text", text: "[omitted 1 text items ...]" },
      ],
    });
  });
});
