import { describe, expect, it } from "vitest";
import { createPaint } from "../../src/core/ansi.js";
import { describeEvent, eventJsonLine, eventKind, formatEventLine } from "../../src/core/event-line.js";

const received = new Date(2030, 0, 1, 12, 0, 0, 0);
const at = "2030-01-01T10:00:00.250Z";
const invocation = { server: "files", tool: "copy", arguments: { from: "a" } };

describe("eventKind", () => {
  it.each([
    ["tb.events.call.begin", "call.begin"],
    ["tb.events.call.end", "call.end"],
    ["tb.events.server.files", "server"],
    ["tb.events.startup_complete", "startup"],
    ["tb.events.catalog", "catalog"],
    ["tb.approvals.pending", "approval.pending"],
    ["tb.approvals.resolved", "approval.resolved"],
    ["tb.events.something_new", "something_new"],
  ])("%s is a %s event", (subject, kind) => {
    expect(eventKind("tb", subject)).toBe(kind);
  });
});

describe("describeEvent", () => {
  it.each([
    [
      "tb.events.call.begin",
      { callId: "c1", invocation, at },
      {
        time: new Date(at),
        kind: "call.begin",
        id: "c1",
        status: "started",
        duration: "",
        detail: "files/copy",
      },
    ],
    [
      "tb.events.call.end",
      {
        callId: "c1",
        invocation,
        at,
        status: "completed",
        durationMs: 1234,
        result: { ok: { content: [] } },
      },
      {
        time: new Date(at),
        kind: "call.end",
        id: "c1",
        status: "completed",
        duration: "1.2s",
        detail: "files/copy",
      },
    ],
    [
      "tb.events.call.end",
      { callId: "c2", invocation, at, status: "failed", durationMs: 0, result: { err: "server crashed" } },
      {
        time: new Date(at),
        kind: "call.end",
        id: "c2",
        status: "failed",
        duration: "0ms",
        detail: "files/copy  server crashed",
      },
    ],
    [
      "tb.events.server.files",
      { server: "files", status: { state: "failed", error: "exited with 1" }, at },
      {
        time: new Date(at),
        kind: "server",
        id: "files",
        status: "failed",
        duration: "",
        detail: "exited with 1",
      },
    ],
    [
      "tb.events.startup_complete",
      { ready: ["a", "b"], failed: [{ server: "c", error: "x" }], cancelled: [] },
      {
        time: received,
        kind: "startup",
        id: "",
        status: "failed",
        duration: "",
        detail: "ready: a, b; failed: c",
      },
    ],
    [
      "tb.events.catalog",
      { revision: 7, changed: ["files"] },
      {
        time: received,
        kind: "catalog",
        id: "",
        status: "",
        duration: "",
        detail: "revision 7  changed: files",
      },
    ],
    [
      "tb.approvals.resolved",
      { requestId: "mcp_tool_call_approval_c1", callId: "c1", decision: "denied", by: "inbox" },
      {
        time: received,
        kind: "approval.resolved",
        id: "c1",
        status: "denied",
        duration: "",
        detail: "by inbox",
      },
    ],
    [
      "tb.events.call.begin",
      { callId: 42 },
      { time: received, kind: "call.begin", id: "", status: "", duration: "", detail: '{"callId":42}' },
    ],
  ])("describes %s %j", (subject, body, line) => {
    expect(describeEvent("tb", { subject, body, receivedAt: received })).toEqual(line);
  });
});

describe("formatEventLine", () => {
  it("lines up time, kind, id, status, duration and details, skipping empty fields", () => {
    const line = formatEventLine(
      {
        time: new Date(2030, 0, 1, 9, 3, 4, 5),
        kind: "call.end",
        id: "c1",
        status: "completed",
        duration: "12ms",
        detail: "files/copy",
      },
      createPaint(false),
    );
    expect(line).toBe("09:03:04.005  call.end           c1  completed  12ms  files/copy");
  });

  it("colors the status and dims the time when colors are on", () => {
    const line = formatEventLine(
      {
        time: new Date(2030, 0, 1, 9, 3, 4, 5),
        kind: "server",
        id: "files",
        status: "ready",
        duration: "",
        detail: "",
      },
      createPaint(true),
    );
    expect(line).toBe("\u001b[2m09:03:04.005\u001b[22m  server             files  \u001b[32mready\u001b[39m");
  });
});

describe("eventJsonLine", () => {
  it("carries the kind, the subject and the body as it came", () => {
    const body = { revision: 3, changed: [] };
    expect(
      JSON.parse(eventJsonLine("tb", { subject: "tb.events.catalog", body, receivedAt: received })),
    ).toEqual({
      kind: "catalog",
      subject: "tb.events.catalog",
      event: body,
    });
  });
});
