// toolbus.memory.strip through the bus (checklist 54–57, 59) and what it does with bad input.
import { MemoryStripResultSchema, WireError } from "@toolbus/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { A, answer, B, citation } from "./citations.js";
import { type Harness, startHarness } from "./support.js";

async function failureOf(promise: Promise<unknown>): Promise<{ code: string; message: string } | "answered"> {
  try {
    await promise;
    return "answered";
  } catch (err) {
    if (err instanceof WireError) return { code: err.code, message: err.message };
    throw err;
  }
}

describe("toolbus.memory.strip", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ scope: "file" });
  });

  it("[54][57] hides the citation, returns its entries and its rollout ids de-duplicated in first-seen order", async () => {
    const text = `hello${citation([B, "not-a-uuid", B, A])} world`;
    expect(await h.request(h.service.subjects.memoryStrip, { text }, MemoryStripResultSchema)).toEqual({
      visibleText: "hello world",
      citation: {
        entries: [{ path: "MEMORY.md", lineStart: 1, lineEnd: 2, note: "x" }],
        rolloutIds: [B, "not-a-uuid", A],
      },
    });
  });

  it("[57] accepts the legacy <thread_ids> block and, in plan mode, hides <proposed_plan> blocks", async () => {
    const text = `plan:\n<proposed_plan>\n1. do it\n</proposed_plan>\n${answer([A], "thread_ids")}`;
    expect(
      await h.request(h.service.subjects.memoryStrip, { text, planMode: true }, MemoryStripResultSchema),
    ).toEqual({
      visibleText: "plan:\nHere is the answer.\n",
      citation: { entries: [{ path: "MEMORY.md", lineStart: 1, lineEnd: 2, note: "x" }], rolloutIds: [A] },
    });
  });

  it("[59] leaves a citation-only reply with no visible text but still returns its citation", async () => {
    expect(
      await h.request(h.service.subjects.memoryStrip, { text: citation([A]) }, MemoryStripResultSchema),
    ).toEqual({
      visibleText: "",
      citation: { entries: [{ path: "MEMORY.md", lineStart: 1, lineEnd: 2, note: "x" }], rolloutIds: [A] },
    });
  });

  it("[55] keeps a trailing partial open tag visible and answers null for text without a citation", async () => {
    expect(
      await h.request(h.service.subjects.memoryStrip, { text: "hello <oai-mem-" }, MemoryStripResultSchema),
    ).toEqual({ visibleText: "hello <oai-mem-", citation: null });
  });

  it("skips entries whose line numbers are past u32", async () => {
    const text = [
      "<oai-mem-citation><citation_entries>",
      "MEMORY.md:4294967296-4294967297|note=[past u32]",
      "MEMORY.md:7-4294967295|note=[u32 max]",
      "</citation_entries></oai-mem-citation>",
    ].join("\n");
    expect(await h.request(h.service.subjects.memoryStrip, { text }, MemoryStripResultSchema)).toEqual({
      visibleText: "",
      citation: {
        entries: [{ path: "MEMORY.md", lineStart: 7, lineEnd: 4_294_967_295, note: "u32 max" }],
        rolloutIds: [],
      },
    });
  });

  it("answers bad_request naming the field for a malformed request", async () => {
    expect(
      await failureOf(h.request(h.service.subjects.memoryStrip, { text: 5 }, MemoryStripResultSchema)),
    ).toEqual({
      code: "bad_request",
      message: "text: Invalid input: expected string, received number",
    });
  });

  it("refuses 10 MB of text as payload_too_large and keeps answering", async () => {
    const text = "x".repeat(10 * 1024 * 1024);
    expect(
      await failureOf(h.request(h.service.subjects.memoryStrip, { text }, MemoryStripResultSchema)),
    ).toEqual({
      code: "payload_too_large",
      message:
        `the request on ${h.service.subjects.memoryStrip} is ${Buffer.byteLength(JSON.stringify({ text }))} bytes, ` +
        `more than one NATS message holds (max_payload: ${h.client.nc.info?.max_payload} bytes); ` +
        "send less, or raise max_payload in the NATS server's configuration",
    });
    expect(
      await h.request(h.service.subjects.memoryStrip, { text: "still here" }, MemoryStripResultSchema),
    ).toEqual({
      visibleText: "still here",
      citation: null,
    });
  });

  it("answers payload_too_large when the parsed citation is too big for one reply", async () => {
    const entries = Array.from({ length: 50_000 }, () => ":1-2|note=[]").join("\n");
    const text = `<oai-mem-citation><citation_entries>\n${entries}\n</citation_entries></oai-mem-citation>`;
    const failure = await failureOf(
      h.request(h.service.subjects.memoryStrip, { text }, MemoryStripResultSchema),
    );
    expect(failure).toEqual({
      code: "payload_too_large",
      message: expect.stringMatching(
        /^the reply of strip is \d+ bytes, over the bus limit of \d+ bytes \(NATS max_payload\); ask for less \(a narrower request or a page\), or raise max_payload in the NATS server's configuration$/,
      ),
    });
  });
});
