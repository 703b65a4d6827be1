/**
 * toolbus's own account of a session: the gateway's `GET /v1/events` stream (calls begun and
 * ended, approvals put and answered — and by whom), read with an approver's token and kept as
 * parsed events for the transcript and its checks.
 */
import {
  type ApprovalRequest,
  ApprovalRequestSchema,
  type ApprovalResolvedEvent,
  ApprovalResolvedEventSchema,
  type CallBeginEvent,
  CallBeginEventSchema,
  type CallEndEvent,
  CallEndEventSchema,
} from "@toolbus/protocol";

export type GatewayEvent =
  | { kind: "approvals.pending"; data: ApprovalRequest }
  | { kind: "approvals.resolved"; data: ApprovalResolvedEvent }
  | { kind: "call.begin"; data: CallBeginEvent }
  | { kind: "call.end"; data: CallEndEvent };

const SCHEMAS = {
  "approvals.pending": ApprovalRequestSchema,
  "approvals.resolved": ApprovalResolvedEventSchema,
  "call.begin": CallBeginEventSchema,
  "call.end": CallEndEventSchema,
} as const;

export interface GatewayEvents {
  events: GatewayEvent[];
  close(): void;
}

/** Resolves once the gateway says the stream is subscribed: nothing published later is missed. */
export async function watchGatewayEvents(gateway: string, token: string): Promise<GatewayEvents> {
  const abort = new AbortController();
  const response = await fetch(`${gateway}/v1/events`, {
    headers: { authorization: `Bearer ${token}`, accept: "text/event-stream" },
    signal: abort.signal,
  });
  if (!response.ok || !response.body) throw new Error(`GET /v1/events answered ${response.status}`);
  const events: GatewayEvent[] = [];
  let markSubscribed: () => void = () => {};
  const subscribed = new Promise<void>((resolve) => (markSubscribed = resolve));
  void (async () => {
    const decoder = new TextDecoder();
    let buffered = "";
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end = buffered.indexOf("\n\n");
        while (end !== -1) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          const kind = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (kind === "subscribed") markSubscribed();
          if (kind !== undefined && data !== undefined && kind in SCHEMAS) {
            const schema = SCHEMAS[kind as keyof typeof SCHEMAS];
            events.push({ kind, data: schema.parse(JSON.parse(data)) } as GatewayEvent);
          }
          end = buffered.indexOf("\n\n");
        }
      }
    } catch (error) {
      if (!abort.signal.aborted) throw error;
    }
  })();
  await subscribed;
  return { events, close: () => abort.abort() };
}

/** One line per event, as the transcript shows it. */
export function describeEvent(event: GatewayEvent): string {
  switch (event.kind) {
    case "approvals.pending": {
      const { data } = event;
      return `approvals.pending   ${data.requestId}: ${JSON.stringify(data.question)} options: ${data.options.map((option) => option.id).join(", ")}`;
    }
    case "approvals.resolved":
      return `approvals.resolved  ${event.data.requestId}: ${event.data.decision} by ${event.data.by}`;
    case "call.begin":
      return `call.begin          ${event.data.callId}: ${event.data.invocation.server}/${event.data.invocation.tool} ${JSON.stringify(event.data.invocation.arguments)}`;
    case "call.end": {
      const { data } = event;
      const outcome =
        "ok" in data.result ? JSON.stringify(data.result.ok.content) : `error: ${data.result.err}`;
      return `call.end            ${data.callId}: ${data.status} in ${Math.round(data.durationMs)} ms, ${outcome}`;
    }
  }
}
