/**
 * Loopback ports for the processes toolbus starts next to itself (a local nats-server, an
 * embedded Postgres) and for tests: a port to bind, and whether something answers on one.
 */
import { createServer, connect as tcpConnect } from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it; the caller binds it next). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** True when something accepts a TCP connection at `host:port` within `timeoutMs`. */
export function acceptsConnections(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
