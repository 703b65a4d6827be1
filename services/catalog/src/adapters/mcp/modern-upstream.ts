/**
 * An upstream server that speaks MCP 2026-07-28 alone (it refused toolbus's 2025 `initialize`
 * with -32022, naming that revision): reached with the v2 SDK's client pinned to it, over
 * streamable HTTP. The era's differences, as the connection sees them:
 * - no session: every request carries toolbus's capabilities, and a call what its caller can
 *   answer (core/caller-capabilities.ts); list changes arrive on a `subscriptions/listen` stream,
 *   opened once connected (its end means the server went away);
 * - a server's questions during a call (elicitations, sampling requests, roots) come back as an
 *   `input_required` result instead of requests: the round goes to the call's relay whole, under
 *   the server's own keys (a 2026-07-28 caller answers it as it is, a 2025 one question by
 *   question), and the call is sent again with the answers and the server's `requestState`,
 *   which never leaves toolbus; for at most `MAX_INPUT_ROUNDS` rounds.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  Client,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { CallInputRequestSchema } from "@toolbus/protocol";
import type { JsonRpcRefusal } from "../../core/initialize-refusal.js";
import { UNSUPPORTED_PROTOCOL_VERSION } from "../../core/initialize-refusal.js";
import type { ServerRequestRelay } from "./call-router.js";

export const MODERN_PROTOCOL = "2026-07-28";
/** Rounds of questions one call may ask before toolbus gives up on it. */
export const MAX_INPUT_ROUNDS = 8;

/** Whether a refused `initialize` came from a server that speaks 2026-07-28. */
export function speaksModern(refusal: JsonRpcRefusal): boolean {
  if (refusal.code !== UNSUPPORTED_PROTOCOL_VERSION) return false;
  const supported = (refusal.data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(supported) && supported.includes(MODERN_PROTOCOL);
}

export interface ModernEvents {
  toolsChanged(): void;
  resourcesChanged(): void;
  promptsChanged(): void;
  closed(error?: Error): void;
}

/** Connects, discovers and opens the listen stream, within `timeoutMs`. */
export async function connectModern(
  spec: { url: string; headers: Record<string, string> },
  options: {
    clientInfo: { name: string; version: string };
    capabilities: Record<string, unknown>;
    fetch: (url: string | URL, init?: RequestInit) => Promise<Response>;
    events: ModernEvents;
    signal: AbortSignal;
    timeoutMs: number;
  },
): Promise<Client> {
  const client = new Client(options.clientInfo, {
    capabilities: options.capabilities,
    versionNegotiation: { mode: { pin: MODERN_PROTOCOL } },
    // toolbus answers the server's questions itself, each through the call it belongs to.
    inputRequired: { autoFulfill: false },
  });
  const transport = new StreamableHTTPClientTransport(new URL(spec.url), {
    requestInit: { headers: spec.headers },
    fetch: options.fetch,
  });
  try {
    await client.connect(transport, { signal: options.signal, timeout: options.timeoutMs });
    await listenForChanges(client, options);
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
  return client;
}

/** The server's list changes, on a listen stream for what it says changes; its end means the server went away. */
async function listenForChanges(
  client: Client,
  options: { events: ModernEvents; timeoutMs: number },
): Promise<void> {
  const { events } = options;
  client.setNotificationHandler("notifications/tools/list_changed", () => events.toolsChanged());
  client.setNotificationHandler("notifications/resources/list_changed", () => events.resourcesChanged());
  client.setNotificationHandler("notifications/prompts/list_changed", () => events.promptsChanged());
  const listChanged = (client.getServerCapabilities() ?? {}) as Record<string, { listChanged?: boolean }>;
  const filter = {
    ...(listChanged.tools?.listChanged ? { toolsListChanged: true } : {}),
    ...(listChanged.resources?.listChanged ? { resourcesListChanged: true } : {}),
    ...(listChanged.prompts?.listChanged ? { promptsListChanged: true } : {}),
  };
  if (Object.keys(filter).length > 0) {
    const subscription = await client.listen(filter, { timeout: options.timeoutMs });
    void subscription.closed.then((how) => {
      if (how !== "local")
        events.closed(new Error(`the MCP server ended its subscriptions/listen stream (${how})`));
    });
  }
}

/**
 * A raw `tools/call` to a 2026-07-28 server: the result as the server sent it, after answering
 * every round of questions through `relay`.
 */
export async function callModern(
  client: Client,
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> },
  options: {
    timeoutMs: number;
    signal?: AbortSignal;
    relay: ServerRequestRelay;
    onProgress?: (progress: Record<string, unknown>) => void;
    /** What the caller can answer (narrowed already); absent: toolbus's own capabilities. */
    clientCapabilities?: Record<string, unknown>;
    /** HTTP headers of the call's every round: its `Mcp-Param-*` headers. */
    headers?: Record<string, string>;
  },
): Promise<Record<string, unknown>> {
  // The SDK's own envelope keys yield to ones the request sets.
  const sent = options.clientCapabilities
    ? { ...params, _meta: { ...params._meta, [CLIENT_CAPABILITIES_META_KEY]: options.clientCapabilities } }
    : params;
  let answers: { inputResponses: Record<string, unknown>; requestState?: string } | undefined;
  for (let round = 0; round <= MAX_INPUT_ROUNDS; round += 1) {
    const result = (await client.request(
      { method: "tools/call", params: { ...sent, ...answers } },
      {
        timeout: options.timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.onProgress ? { onprogress: (progress) => options.onProgress?.({ ...progress }) } : {}),
        allowInputRequired: true,
        ...(options.headers ? { headers: options.headers } : {}),
      },
    )) as Record<string, unknown>;
    if (result.resultType !== "input_required") return result;
    const round = CallInputRequestSchema.shape.requests.safeParse(result.inputRequests ?? {});
    if (!round.success) {
      throw new Error(
        `the MCP server's input_required result is malformed (inputRequests: ${round.error.issues[0]?.message ?? "invalid"}); toolbus cannot answer it`,
      );
    }
    answers = {
      inputResponses: await options.relay.answerRound(round.data),
      ...(typeof result.requestState === "string" ? { requestState: result.requestState } : {}),
    };
  }
  throw new Error(
    `the MCP server asked for input more than ${MAX_INPUT_ROUNDS} times in one tools/call; toolbus stopped answering`,
  );
}
