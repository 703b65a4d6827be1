/**
 * A TCP relay between the service and the real Postgres that can hold all traffic: while held,
 * bytes in either direction wait in the relay (connections stay open, queries get no answer), as
 * when the database stalls. Released, everything held goes through in order.
 */

import type { AddressInfo } from "node:net";
import { connect, createServer, type Socket } from "node:net";

export interface PgGate {
  /** `databaseUrl` with its host and port replaced by the relay's. */
  url: string;
  hold(): void;
  release(): void;
  close(): Promise<void>;
}

export async function pgGate(databaseUrl: string): Promise<PgGate> {
  const target = new URL(databaseUrl);
  let held = false;
  const queued: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const forward = (from: Socket, to: Socket) => {
    from.on("data", (chunk) => {
      if (held) queued.push(() => to.write(chunk));
      else to.write(chunk);
    });
    from.on("close", () => to.destroy());
    from.on("error", () => to.destroy());
  };
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) sockets.add(socket);
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const relayed = new URL(databaseUrl);
  relayed.hostname = "127.0.0.1";
  relayed.port = String((server.address() as AddressInfo).port);
  return {
    url: relayed.toString(),
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      for (const send of queued.splice(0)) send();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
