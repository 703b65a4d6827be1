/** The catalog service's metrics, recorded in catalog-service.ts and the connector-call handler. */
import { AttributeCache, defineMetrics, type Instruments, observeGauge } from "@toolbus/bus";
import { ServerStatus } from "@toolbus/protocol";

export const CATALOG_METRICS = defineMetrics("@toolbus/catalog", {
  revision: {
    kind: "gauge",
    name: "toolbus.catalog.revision",
    unit: "{revision}",
    description:
      "The catalog revision: the sequence of the catalog bucket's last change (what `toolbus.catalog.get` returns).",
    attributes: [],
  },
  servers: {
    kind: "gauge",
    name: "toolbus.catalog.servers",
    unit: "{server}",
    description:
      "Servers this catalog replica owns, by status (`starting`, `ready`, `failed`, `cancelled`, `disabled`); every status is reported, 0 included.",
    attributes: ["toolbus.server.status"],
  },
  connectorRestarts: {
    kind: "counter",
    name: "toolbus.catalog.connector.restarts",
    unit: "{restart}",
    description: "Reconnection attempts after a server's connection was lost, by server.",
    attributes: ["mcp.server"],
  },
  connectorCallDuration: {
    kind: "histogram",
    name: "toolbus.catalog.connector.call.duration",
    unit: "s",
    description:
      "Seconds a raw tool call took at the connector, by server and outcome (`ok`, or why not: `stale`, `not_ready`, `bad_arguments`, `disabled`, `timeout`, `too_large`, `cancelled`, `failed`).",
    attributes: ["mcp.server", "toolbus.call.outcome"],
  },
});

export type CatalogInstruments = Instruments<(typeof CATALOG_METRICS)["specs"]>;

const STATUSES = Object.values(ServerStatus);
const STATUS_ATTRIBUTES = new Map(STATUSES.map((status) => [status, { "toolbus.server.status": status }]));

export function catalogRecorder(instruments: CatalogInstruments = CATALOG_METRICS.create()) {
  const byServer = new AttributeCache((server: string) => ({ "mcp.server": server }));
  const byOutcome = new AttributeCache((server: string, outcome: string) => ({
    "mcp.server": server,
    "toolbus.call.outcome": outcome,
  }));
  return {
    restarting(server: string): void {
      instruments.connectorRestarts.add(1, byServer.get(server));
    },
    connectorCall(server: string, outcome: string, seconds: number): void {
      instruments.connectorCallDuration.record(seconds, byOutcome.get(server, outcome));
    },
    /**
     * Reports the catalog revision and the owned servers' statuses on each export; returns the
     * function that stops it.
     */
    observe(sources: { revision(): Promise<number>; statuses(): Iterable<ServerStatus> }): () => void {
      const stopRevision = observeGauge(instruments.revision, async (result) =>
        result.observe(await sources.revision()),
      );
      const stopServers = observeGauge(instruments.servers, (result) => {
        const counts = new Map<ServerStatus, number>(STATUSES.map((status) => [status, 0]));
        for (const status of sources.statuses()) counts.set(status, (counts.get(status) ?? 0) + 1);
        for (const [status, count] of counts) result.observe(count, STATUS_ATTRIBUTES.get(status)!);
      });
      return () => {
        stopRevision();
        stopServers();
      };
    },
  };
}

export type CatalogRecorder = ReturnType<typeof catalogRecorder>;
