// Container health of a toolbus service that serves no HTTP (catalog, dispatcher, memory): exit 0 when
// this container holds an established TCP connection to a port of NATS_URL. It reads
// /proc/net/tcp{,6} of the container's own network namespace, so it needs no NATS client, no
// dependency and no port; in Kubernetes the namespace is the pod's, which holds one container.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const DEFAULT_NATS_PORT = 4222;
const ESTABLISHED = "01";

/** The ports named by a NATS_URL (comma-separated servers, with or without a scheme). */
export function natsPorts(natsUrl) {
  const servers = (natsUrl ?? "")
    .split(",")
    .map((server) => server.trim())
    .filter(Boolean);
  if (servers.length === 0) return [DEFAULT_NATS_PORT];
  return [
    ...new Set(
      servers.map((server) => {
        const url = new URL(server.includes("://") ? server : `nats://${server}`);
        return url.port === "" ? DEFAULT_NATS_PORT : Number(url.port);
      }),
    ),
  ];
}

/** True when a row of /proc/net/tcp or /proc/net/tcp6 text is an established connection to one of `ports`. */
export function hasEstablishedConnection(procNetTcp, ports) {
  return procNetTcp
    .split("\n")
    .slice(1)
    .some((line) => {
      const [, , remote, state] = line.trim().split(/\s+/);
      if (remote === undefined || state !== ESTABLISHED) return false;
      const port = Number.parseInt(remote.slice(remote.lastIndexOf(":") + 1), 16);
      return ports.includes(port);
    });
}

function readTable(path) {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const ports = natsPorts(process.env.NATS_URL);
  const tables = ["/proc/net/tcp", "/proc/net/tcp6"].map(readTable);
  if (tables.some((table) => hasEstablishedConnection(table, ports))) process.exit(0);
  process.stderr.write(
    `no established connection to NATS (port ${ports.join(", ")}); the service is reconnecting or stuck\n`,
  );
  process.exit(1);
}
