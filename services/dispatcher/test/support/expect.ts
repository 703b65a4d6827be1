/**
 * Expected shapes for whole-object comparisons: a reply or an event as the contract says it
 * must be, with only the measured values (durations, timestamps) taken from what was observed.
 */
import type { CallBeginEvent, CallEndEvent, ToolCallReply } from "@toolbus/protocol";
import { expect } from "vitest";
import type { RecordedEvent } from "./harness.js";
import { wallTimeHeader } from "./harness.js";

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The text body the model gets: the header, then `text` on the next line. */
export function textBody(reply: ToolCallReply, text: string): string {
  return `${wallTimeHeader(reply.wallTimeMs)}\n${text}`;
}

/** The body of an error text E: the header and the JSON of `[{type:"text",text:E}]`. */
export function errorBody(reply: ToolCallReply, message: string): string {
  return textBody(reply, JSON.stringify([{ type: "text", text: message }]));
}

/** A reply for a call that did not run (skipped, or failed before the server): duration 0. */
export function notRunReply(
  reply: ToolCallReply,
  fields: Pick<ToolCallReply, "callId" | "status" | "catalogRevision"> &
    Partial<Pick<ToolCallReply, "server" | "tool" | "hookName">> & { error: string },
): ToolCallReply {
  return {
    ...fields,
    output: { success: false, body: errorBody(reply, fields.error) },
    durationMs: 0,
    wallTimeMs: reply.wallTimeMs,
  };
}

export type PhasedEvent = Pick<RecordedEvent, "phase" | "body">;

/** The begin and end events of a call, in that order, with any timestamp. */
export function lifecycle(
  begin: Omit<CallBeginEvent, "at">,
  end: Pick<CallEndEvent, "status" | "durationMs" | "result">,
): PhasedEvent[] {
  const at = expect.stringMatching(ISO_TIMESTAMP) as unknown as string;
  return [
    { phase: "begin", body: { ...begin, at } },
    { phase: "end", body: { ...begin, at, ...end } },
  ];
}

/** Recorded events without their headers, for comparison with `lifecycle`. */
export function phased(events: readonly RecordedEvent[]): PhasedEvent[] {
  return events.map(({ phase, body }) => ({ phase, body }));
}
