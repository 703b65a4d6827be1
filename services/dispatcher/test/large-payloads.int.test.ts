/**
 * Payloads past 1 MiB (checklist 45, issue "Bad input"), on a nats-server of this file's own
 * whose max_payload (32 MiB) lets them through: a result over 1 MiB reaches the caller whole
 * while the end event carries one truncated text block; arguments over the 8 MiB contract cap
 * are refused by the schema, naming the field.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import type { CallEndEvent } from "@toolbus/protocol";
import { startThrowawayNats, type ThrowawayNats } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DispatchHarness, wallTimeHeader } from "./support/harness.js";

const MIB = 1024 * 1024;
const BLOB = "z".repeat(1_200_000);

let nats: ThrowawayNats;
let h: DispatchHarness;

beforeAll(async () => {
  nats = await startThrowawayNats({ maxPayload: 32 * MIB });
  h = await DispatchHarness.start({
    label: "large",
    natsUrl: nats.url,
    script: {
      tools: [{ name: "echo" }, { name: "big", behavior: { kind: "structured", value: { blob: BLOB } } }],
    },
  });
});
afterAll(async () => {
  await h?.close();
  await nats?.destroy();
});

describe("a result over 1 MiB", () => {
  it("[45] reaches the caller whole, while the end event stores one truncated text block", async () => {
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__big", arguments: "" });
    const end = (await h.endedEvents(callId)).find((event) => event.phase === "end")!.body as CallEndEvent;
    const raw = {
      content: [{ type: "text", text: JSON.stringify({ blob: BLOB }) }],
      structuredContent: { blob: BLOB },
    };
    const copy = "ok" in end.result ? end.result.ok : undefined;
    const preview = copy?.content[0]?.type === "text" ? String(copy.content[0].text) : "";
    const [head = "", tail = ""] = preview.split(/…\d+ chars truncated…/);
    const serialized = JSON.stringify(raw);
    const model = `${wallTimeHeader(reply.wallTimeMs)}\n${JSON.stringify({ blob: BLOB })}`;
    expect({
      rawResult: reply.result,
      copyShape: { ...copy, content: copy?.content.map((block) => ({ ...block, text: "<preview>" })) },
      copyWithinCap: Buffer.byteLength(JSON.stringify(copy)) <= MIB,
      copyNearlyFull: Buffer.byteLength(JSON.stringify(copy)) > MIB - 1024,
      previewIsMiddleOfTheSerializedResult: serialized.startsWith(head) && serialized.endsWith(tail),
      modelOutput: reply.output,
    }).toEqual({
      rawResult: raw,
      copyShape: { content: [{ type: "text", text: "<preview>" }] },
      copyWithinCap: true,
      copyNearlyFull: true,
      previewIsMiddleOfTheSerializedResult: true,
      // The model reads only structuredContent, middle-truncated to 10,000 × 1.2 bytes.
      modelOutput: {
        success: true,
        body: `${model.slice(0, 6_000)}…${model.length - 12_000} chars truncated…${model.slice(-6_000)}`,
      },
    });
  });

  it("keeps the stored end event the same capped copy the subscribers saw", async () => {
    const callId = h.callId();
    await h.ok({ callId, tool: "mcp__scripted__big", arguments: "" });
    const seen = (await h.endedEvents(callId)).find((event) => event.phase === "end")!.body;
    const jsm = await jetstreamManager(h.nc);
    const stored = await jsm.streams.getMessage(h.subjects.streams.events.name, {
      last_by_subj: h.subjects.callEnd,
    });
    expect(stored?.json()).toEqual(seen);
  });
});

describe("arguments past the contract's 8 MiB cap", () => {
  it("answers 20 MB of arguments with bad_request naming `arguments`, with no events", async () => {
    const callId = h.callId();
    const envelope = await h.call({
      callId,
      tool: "mcp__scripted__echo",
      arguments: JSON.stringify({ s: "x".repeat(20_000_000) }),
    });
    const later = await h.ok({ tool: "mcp__scripted__echo", arguments: "{}" });
    await h.endedEvents(later.callId);
    expect({ envelope, events: h.eventsOf(callId) }).toEqual({
      envelope: {
        ok: false,
        error: {
          code: "bad_request",
          message: "arguments: Too big: expected string to have <=8388608 bytes",
          retryable: false,
        },
      },
      events: [],
    });
  });

  it("calls the server with 2 MiB of arguments, and caps the end event's copy of the echo", async () => {
    const args = { s: "w".repeat(2 * MIB) };
    const callId = h.callId();
    const reply = await h.ok({ callId, tool: "mcp__scripted__echo", arguments: JSON.stringify(args) });
    const events = await h.endedEvents(callId);
    const end = events.find((event) => event.phase === "end")!.body as CallEndEvent;
    expect({
      status: reply.status,
      rawWhole: reply.result?.content[0],
      beginArguments: events[0]?.body.invocation.arguments,
      endArguments: end.invocation.arguments,
      copyWithinCap: Buffer.byteLength(JSON.stringify(end.result)) <= MIB + 16,
    }).toEqual({
      status: "completed",
      rawWhole: { type: "text", text: JSON.stringify(args) },
      beginArguments: args,
      endArguments: args,
      copyWithinCap: true,
    });
  });
});
