/**
 * The NATS connection's socket, written at most twice per turn of the event loop. nats.js writes
 * at each microtask checkpoint, so every request a service handles in its own I/O callback pays
 * its own write syscall, and on loopback that syscall also runs the receiving side's TCP work.
 * Here the first write of a turn goes out at once, as nats.js made it; what follows in the same
 * turn (under load: many calls' requests, replies and events) is corked until the loop's check
 * phase and leaves in one write. Order on the connection is unchanged, and a lone message (a
 * quiet service) is not delayed at all.
 */
import {
  type NatsConnection,
  NatsConnectionImpl,
  type NodeConnectionOptions,
  setTransportFactory,
} from "@nats-io/transport-node";
import { NodeTransport, nodeResolveHost } from "@nats-io/transport-node/lib/node_transport.js";

export class CoalescingTransport extends NodeTransport {
  /** A write went out in this turn of the event loop; the next ones wait for its check phase. */
  #wroteThisTurn = false;
  #corked = false;

  override send(frame: Uint8Array): void {
    const socket = this.socket;
    if (socket && !this.isClosed) {
      if (!this.#wroteThisTurn) {
        this.#wroteThisTurn = true;
        setImmediate(() => {
          this.#wroteThisTurn = false;
          if (this.#corked) {
            this.#corked = false;
            socket.uncork();
          }
        });
      } else if (!this.#corked) {
        this.#corked = true;
        socket.cork();
      }
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
