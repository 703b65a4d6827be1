/**
 * What an MCP SDK client receives, message by message: for assertions on messages the client
 * handles itself and never shows the test (a `notifications/cancelled`, a request's raw id).
 */
import type { JSONRPCMessage, Transport } from "@modelcontextprotocol/client";

/** Every JSON-RPC message the connected `client` receives from now on, in order of arrival. */
export function receivedMessages(client: { readonly transport?: Transport | undefined }): JSONRPCMessage[] {
  const transport = client.transport;
  if (transport === undefined) throw new Error("connect the client before watching what it receives");
  const messages: JSONRPCMessage[] = [];
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    messages.push(message);
    deliver?.(message, extra);
  };
  return messages;
}

/** The `elicitation/create` requests among `messages`. */
export function elicitationsIn(messages: readonly JSONRPCMessage[]) {
  return messages.flatMap((message) =>
    "method" in message && message.method === "elicitation/create" && "id" in message ? [message] : [],
  );
}

/** The params of the `notifications/cancelled` among `messages`: which request, and why. */
export function cancellationsIn(messages: readonly JSONRPCMessage[]) {
  return messages.flatMap((message) =>
    "method" in message && message.method === "notifications/cancelled" ? [message.params] : [],
  );
}
