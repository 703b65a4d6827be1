import type { CallBeginEvent, CallEndEvent, CallToolResult } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { reduceCallItems } from "../../src/core/call-items.js";

const begin = (callId: string, extra: Partial<CallBeginEvent> = {}): CallBeginEvent => ({
  callId,
  invocation: { server: "docs", tool: "search", arguments: { q: callId } },
  at: "2026-12-01T10:00:00.000Z",
  ...extra,
});
const ok: CallToolResult = { content: [{ type: "text", text: "found" }] };
const end = (
  callId: string,
  result: CallEndEvent["result"],
  status: CallEndEvent["status"],
  durationMs = 12,
): CallEndEvent => ({
  ...begin(callId),
  at: "2026-12-01T10:00:01.000Z",
  status,
  durationMs,
  result,
});
const started = (id: string) => ({
  id,
  server: "docs",
  tool: "search",
  arguments: { q: id },
  status: "inProgress",
});

describe("[43] reduceCallItems", () => {
  it.each([
    { name: "a begun call is in progress", events: [begin("a")], items: [started("a")] },
    {
      name: "no arguments are null on the item",
      events: [begin("a", { invocation: { server: "docs", tool: "search", arguments: null } })],
      items: [{ ...started("a"), arguments: null }],
    },
    {
      name: "a completed call carries its result and duration",
      events: [begin("a"), end("a", { ok }, "completed", 40)],
      items: [{ ...started("a"), status: "completed", result: ok, durationMs: 40 }],
    },
    {
      name: "an isError result fails with the result",
      events: [begin("a"), end("a", { ok: { ...ok, isError: true } }, "failed")],
      items: [{ ...started("a"), status: "failed", result: { ...ok, isError: true }, durationMs: 12 }],
    },
    {
      name: "a transport error fails with error.message and no result",
      events: [begin("a"), end("a", { err: "tool call error: timed out" }, "failed")],
      items: [
        {
          ...started("a"),
          status: "failed",
          error: { message: "tool call error: timed out" },
          durationMs: 12,
        },
      ],
    },
    {
      name: "a skip fails with duration 0",
      events: [begin("a"), end("a", { err: "user cancelled MCP tool call" }, "failed", 0)],
      items: [
        {
          ...started("a"),
          status: "failed",
          error: { message: "user cancelled MCP tool call" },
          durationMs: 0,
        },
      ],
    },
    {
      name: "an end without a begin makes the finished item by itself",
      events: [end("a", { ok }, "completed")],
      items: [{ ...started("a"), status: "completed", result: ok, durationMs: 12 }],
    },
    {
      name: "a begin stored after its end (retried across an outage) changes nothing",
      events: [end("a", { ok }, "completed"), begin("a")],
      items: [{ ...started("a"), status: "completed", result: ok, durationMs: 12 }],
    },
    {
      name: "a repeated begin does not reset or duplicate the item",
      events: [begin("a"), end("a", { ok }, "completed"), begin("a")],
      items: [{ ...started("a"), status: "completed", result: ok, durationMs: 12 }],
    },
    {
      name: "a repeated end keeps the first",
      events: [begin("a"), end("a", { ok }, "completed", 5), end("a", { err: "late" }, "failed", 9)],
      items: [{ ...started("a"), status: "completed", result: ok, durationMs: 5 }],
    },
    {
      name: "items keep the order their calls began in",
      events: [begin("b"), begin("a"), end("a", { ok }, "completed"), begin("c")],
      items: [
        started("b"),
        { ...started("a"), status: "completed", result: ok, durationMs: 12 },
        started("c"),
      ],
    },
    {
      name: "app and plugin fields are copied when present",
      events: [
        begin("a", {
          connectorId: "conn_1",
          mcpAppResourceUri: "ui://widget",
          linkId: "link",
          appName: "Calendar",
          actionName: "create_event",
          pluginId: "cal@1",
          readOnlyHint: false,
          threadId: "t1",
        }),
      ],
      items: [
        {
          ...started("a"),
          connectorId: "conn_1",
          mcpAppResourceUri: "ui://widget",
          linkId: "link",
          appName: "Calendar",
          actionName: "create_event",
          pluginId: "cal@1",
          readOnlyHint: false,
        },
      ],
    },
  ])("$name", ({ events, items }) => {
    expect(reduceCallItems(events)).toEqual(items);
  });
});
