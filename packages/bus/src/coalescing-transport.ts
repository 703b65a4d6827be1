/**
 * The NATS connection's socket, written once per turn of the event loop. nats.js writes at each
 * microtask checkpoint, so every request a service handles in its own I/O callback pays its own
 * write syscall, and on loopback that syscall also runs the receiving side's TCP work. Corked
 * until the loop's check phase, everything sent during one turn (under load: many calls'
 * requests, replies and events) leaves in one write. Order is unchanged; a lone message waits
 * only for the rest of its loop turn.
 */
import {
  type NatsConnection,
  NatsConnectionImpl,
  type NodeConnectionOptions,
  setTransportFactory,
} from "@nats-io/transport-node";
import { NodeTransport, nodeResolveHost } from "@nats-io/transport-node/lib/node_transport.js";

export class CoalescingTransport extends NodeTransport {
  #corked = false;

  override send(frame: Uint8Array): void {
    const socket = this.socket;
    if (!this.#corked && socket && !this.isClosed) {
      this.#corked = true;
      socket.cork();
      setImmediate(() => {
        this.#corked = false;
        socket.uncork();
      });
    }
    super.send(frame);
  }

  override close(err?: Error): Promise<void> {
    // What is still corked goes out before the connection's last flush and close.
    if (this.#corked && this.socket) {
      this.#corked = false;
      this.socket.uncork();
    }
    return super.close(err);
  }
}

/** `connect` of @nats-io/transport-node, with the coalescing transport. */
export function connectCoalescing(options: NodeConnectionOptions): Promise<NatsConnection> {
  setTransportFactory({ factory: () => new CoalescingTransport(), dnsResolveFn: nodeResolveHost });
  return NatsConnectionImpl.connect(options);
}
