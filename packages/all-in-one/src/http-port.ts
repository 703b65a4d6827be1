/**
 * The gateway's port, checked before any service starts: a port in use is one line that says
 * what to do, instead of five services started and stopped again around a listen error.
 */
import { createServer } from "node:net";
import { SetupError } from "./setup-error.js";

/** Resolves when `host:port` can be listened on (port 0 always can); throws SetupError otherwise. */
export function ensurePortFree(host: string, port: number): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", (error: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`;
      const change = "choose another with TOOLBUS_HTTP_PORT=<port> or [gateway] port in toolbus.toml";
      if (error.code === "EADDRINUSE") {
        reject(
          new SetupError(
            `port ${where} is already in use (another toolbus?): stop what uses it, or ${change}.`,
          ),
        );
      } else if (error.code === "EACCES") {
        reject(
          new SetupError(`not allowed to listen on ${where}: ${change} (ports below 1024 need privileges).`),
        );
      } else if (error.code === "EADDRNOTAVAIL") {
        reject(
          new SetupError(`cannot listen on ${where}: this machine has no such address; fix [gateway] host.`),
        );
      } else {
        reject(new SetupError(`cannot listen on ${where}: ${error.message}; ${change}.`));
      }
    });
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}
