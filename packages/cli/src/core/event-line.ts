/**
 * `toolbus tail`: what one bus event says, as a line — time, kind, callId or server, status,
 * duration, details — and as a JSON line. Bodies are read through the protocol schemas; a body
 * that does not match is still shown (as compact JSON), never dropped.
 */
import {
  ApprovalRequestSchema,
  ApprovalResolvedEventSchema,
  CallBeginEventSchema,
  CallEndEventSchema,
  CatalogEventSchema,
  ServerStatusEventSchema,
  StartupCompleteEventSchema,
} from "@toolbus/protocol";
import { type Paint, paintStatus } from "./ansi.js";
import { formatClock, formatDuration } from "./duration.js";
import { oneLine, padToWidth, truncateToWidth } from "./text.js";

export interface BusEvent {
  readonly subject: string;
  readonly body: unknown;
  readonly receivedAt: Date;
}

export interface EventLine {
  readonly time: Date;
  readonly kind: string;
  /** The callId, or the server for server events; empty when the event has neither. */
  readonly id: string;
  readonly status: string;
  /** Formatted, or empty. */
  readonly duration: string;
  readonly detail: string;
}

/** The kind of the widest name, so kinds line up. */
export const KIND_WIDTH = "approval.resolved".length;
const DETAIL_JSON_MAX = 200;

/** `<prefix>.events.call.begin` → `call.begin`; `<prefix>.approvals.pending` → `approval.pending`. */
export function eventKind(prefix: string, subject: string): string {
  const rest = subject.startsWith(`${prefix}.`) ? subject.slice(prefix.length + 1) : subject;
  if (rest.startsWith("events.server.")) return "server";
  if (rest === "events.startup_complete") return "startup";
  if (rest.startsWith("events.")) return rest.slice("events.".length);
  if (rest.startsWith("approvals.")) return `approval.${rest.slice("approvals.".length)}`;
  return rest;
}

/** The name a call's tool is shown by: `server/tool` when no better one is known. */
export type ToolNamer = (server: string, tool: string) => string;

export function describeEvent(
  prefix: string,
  event: BusEvent,
  toolName: ToolNamer = (server, tool) => `${server}/${tool}`,
): EventLine {
  const kind = eventKind(prefix, event.subject);
  const base = { time: event.receivedAt, kind, id: "", status: "", duration: "", detail: "" };
  const at = (iso: string) => {
    const time = new Date(iso);
    return Number.isNaN(time.getTime()) ? event.receivedAt : time;
  };
  switch (kind) {
    case "call.begin": {
      const e = CallBeginEventSchema.safeParse(event.body);
      if (!e.success) break;
      const { server, tool } = e.data.invocation;
      return {
        ...base,
        time: at(e.data.at),
        id: e.data.callId,
        status: "started",
        detail: toolName(server, tool),
      };
    }
    case "call.end": {
      const e = CallEndEventSchema.safeParse(event.body);
      if (!e.success) break;
      const { server, tool } = e.data.invocation;
      const error =
        "err" in e.data.result ? e.data.result.err : e.data.result.ok.isError ? "error result" : "";
      return {
        ...base,
        time: at(e.data.at),
        id: e.data.callId,
        status: e.data.status,
        duration: formatDuration(e.data.durationMs),
        detail: [toolName(server, tool), error].filter(Boolean).join("  "),
      };
    }
    case "server": {
      const e = ServerStatusEventSchema.safeParse(event.body);
      if (!e.success) break;
      const detail = e.data.status.state === "failed" ? e.data.status.error : "";
      return { ...base, time: at(e.data.at), id: e.data.server, status: e.data.status.state, detail };
    }
    case "startup": {
      const e = StartupCompleteEventSchema.safeParse(event.body);
      if (!e.success) break;
      const detail = [
        `ready: ${e.data.ready.join(", ") || "none"}`,
        ...(e.data.failed.length > 0 ? [`failed: ${e.data.failed.map((f) => f.server).join(", ")}`] : []),
        ...(e.data.cancelled.length > 0 ? [`cancelled: ${e.data.cancelled.join(", ")}`] : []),
      ].join("; ");
      return { ...base, status: e.data.failed.length > 0 ? "failed" : "ready", detail };
    }
    case "catalog": {
      const e = CatalogEventSchema.safeParse(event.body);
      if (!e.success) break;
      const changed = e.data.changed.length > 0 ? `  changed: ${e.data.changed.join(", ")}` : "";
      return { ...base, detail: `revision ${e.data.revision}${changed}` };
    }
    case "approval.pending": {
      const e = ApprovalRequestSchema.safeParse(event.body);
      if (!e.success) break;
      return {
        ...base,
        time: at(e.data.createdAt),
        id: e.data.callId,
        status: "pending",
        detail: toolName(e.data.server, e.data.tool),
      };
    }
    case "approval.resolved": {
      const e = ApprovalResolvedEventSchema.safeParse(event.body);
      if (!e.success) break;
      return { ...base, id: e.data.callId, status: e.data.decision, detail: `by ${e.data.by}` };
    }
  }
  return { ...base, detail: truncateToWidth(oneLine(safeJson(event.body)), DETAIL_JSON_MAX) };
}

/** `12:03:04.005  call.end           cli-1  completed  12ms  test/echo` */
export function formatEventLine(line: EventLine, paint: Paint): string {
  const status = line.status === "" ? "" : paintStatus(paint, oneLine(line.status));
  return [
    paint.dim(formatClock(line.time)),
    padToWidth(line.kind, KIND_WIDTH),
    oneLine(line.id),
    status,
    line.duration,
    oneLine(line.detail),
  ]
    .filter((part) => part !== "")
    .join("  ")
    .trimEnd();
}

/** The `--json` line: the subject, its kind and the event body as it came. */
export function eventJsonLine(prefix: string, event: BusEvent): string {
  return JSON.stringify({
    kind: eventKind(prefix, event.subject),
    subject: event.subject,
    event: event.body,
  });
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
