/** Whether the NATS connection is up right now (for `/readyz`), from its status events. */
import type { NatsConnection } from "@nats-io/transport-node";

export function busHealth(nc: NatsConnection): { connected(): boolean } {
  let connected = !nc.isClosed();
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === "disconnect" || status.type === "close") connected = false;
      else if (status.type === "reconnect") connected = true;
    }
  })().catch(() => undefined);
  return { connected: () => connected && !nc.isClosed() };
}
