/**
 * `pnpm cluster`: starts the cluster harness for a person (README "Running on a cluster"), prints
 * where everything is, and stops it all on Ctrl-C.
 */
import { join } from "node:path";
import { startCluster } from "./index.js";

const started = Date.now();
process.stdout.write("starting a 3-node NATS cluster, Postgres and every service (2 of each)…\n");
const cluster = await startCluster().catch((error: unknown) => {
  process.stderr.write(
    `the cluster did not start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});

const natsUrl = cluster.natsUrls.join(",");
const lines = [
  `toolbus cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s (prefix ${cluster.prefix}, ${cluster.replicas} replicas per stream and bucket)`,
  "",
  "MCP endpoints (streamable HTTP, no token):",
  ...cluster.gatewayMcpUrls.map((url, i) => `  gateway ${i + 1}: ${url}`),
  "approvals inboxes:",
  ...cluster.services.approvals.map((approvals, i) => `  approvals ${i + 1}: ${approvals.url}/approvals`),
  "NATS (authenticated):",
  ...cluster.nats.map((node) => `  ${node.name}: ${node.url}  (monitoring ${node.monitorUrl})`),
  `Postgres: ${cluster.postgres.url}`,
  `toolbus.toml: ${cluster.configPath}`,
  "",
  "The CLI, as the operator's identity:",
  `  NATS_URL=${natsUrl} NATS_NKEY_FILE=${join(cluster.identitiesDir, "cli.nk")} TOOLBUS_PREFIX=${cluster.prefix} node packages/cli/bin/toolbus.js tools`,
  "",
  "processes:",
  ...Object.values(cluster.services)
    .flat()
    .map((service) => `  ${service.name}: pid ${service.pid}`),
  "",
  "Ctrl-C stops everything.",
];
process.stdout.write(`${lines.join("\n")}\n`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  process.stdout.write("stopping…\n");
  await cluster.stop();
  process.exit(0);
};
process.on("SIGINT", () => void stop());
process.on("SIGTERM", () => void stop());
