/**
 * Lifecycle events that fit one bus message. A JetStream event larger than the bus's
 * `max_payload` is refused and lost, which would leave a begin without its end. So the end
 * event's result copy is capped at 1 MiB (docs/reference-behavior.md §6) and further at the room the rest of the
 * event leaves; arguments too large to leave any room are replaced, in the event only, by a
 * note saying how large they were (the begin event, and the call itself, keep them whole
 * whenever they fit).
 */
import type { CallBeginEvent, CallEndEvent } from "@toolbus/protocol";
import type { ResultOrError } from "./call-outcome.js";
import { EVENT_RESULT_MAX_BYTES, eventResultCopy } from "./event-copy.js";
import { utf8Length } from "./truncate.js";

/** Room kept for the message headers (msg id, trace context) within `max_payload`. */
export const EVENT_HEADER_ROOM_BYTES = 4096;
/** Below this much room for the result, the end event drops its copy of the arguments instead. */
const MIN_RESULT_ROOM_BYTES = 1024;

export function argumentsOmittedNote(bytes: number): string {
  return `<${bytes} bytes of arguments omitted from this event: it must fit the bus's max_payload>`;
}

const sizeOf = (value: unknown) => utf8Length(JSON.stringify(value));

function withoutArguments<T extends CallBeginEvent>(event: T): T {
  const bytes = sizeOf(event.invocation.arguments);
  return { ...event, invocation: { ...event.invocation, arguments: argumentsOmittedNote(bytes) } };
}

/** The begin event as published: whole when it fits `maxEventBytes`, else without its arguments. */
export function fitBeginEvent(event: CallBeginEvent, maxEventBytes: number): CallBeginEvent {
  return sizeOf(event) <= maxEventBytes ? event : withoutArguments(event);
}

/**
 * The end event for `outcome`: the result copy capped at 1 MiB and at what `maxEventBytes`
 * leaves after the other fields.
 */
export function fitEndEvent(
  fields: Omit<CallEndEvent, "result">,
  outcome: ResultOrError,
  maxEventBytes: number,
): CallEndEvent {
  const roomFor = (event: Omit<CallEndEvent, "result">) =>
    maxEventBytes - sizeOf({ ...event, result: { err: "" } });
  let event = fields;
  if (roomFor(event) < MIN_RESULT_ROOM_BYTES) event = withoutArguments(event);
  const budget = Math.max(MIN_RESULT_ROOM_BYTES / 4, Math.min(EVENT_RESULT_MAX_BYTES, roomFor(event)));
  return { ...event, result: eventResultCopy(outcome, budget) };
}
