/**
 * History: folding the begin/end lifecycle events of calls into `McpToolCallItem`s
 * (docs/reference-behavior.md §6). Events may be redelivered, so a repeated begin or end changes
 * nothing. An end carries every field of its begin, so an end whose begin is missing, or was
 * stored after it (a begin retried across a JetStream outage), makes the finished item by itself.
 */
import type { CallBeginEvent, CallEndEvent, McpToolCallItem } from "@toolbus/protocol";

export function isEndEvent(event: CallBeginEvent | CallEndEvent): event is CallEndEvent {
  return "status" in event;
}

/** Items in the order their calls began. */
export function reduceCallItems(events: Iterable<CallBeginEvent | CallEndEvent>): McpToolCallItem[] {
  const items = new Map<string, McpToolCallItem>();
  for (const event of events) {
    const item = items.get(event.callId);
    if (!isEndEvent(event)) {
      if (item === undefined) items.set(event.callId, startedItem(event));
    } else if (item === undefined || item.status === "inProgress") {
      items.set(event.callId, completedItem(item ?? startedItem(event), event));
    }
  }
  return [...items.values()];
}

function startedItem(event: CallBeginEvent | CallEndEvent): McpToolCallItem {
  const { invocation, connectorId, mcpAppResourceUri, linkId, appName, actionName, pluginId, readOnlyHint } =
    event;
  const optional = { connectorId, mcpAppResourceUri, linkId, appName, actionName, pluginId, readOnlyHint };
  return {
    id: event.callId,
    server: invocation.server,
    tool: invocation.tool,
    arguments: invocation.arguments,
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
    status: "inProgress",
  };
}

function completedItem(item: McpToolCallItem, end: CallEndEvent): McpToolCallItem {
  const outcome = "ok" in end.result ? { result: end.result.ok } : { error: { message: end.result.err } };
  return { ...item, status: end.status, ...outcome, durationMs: end.durationMs };
}
