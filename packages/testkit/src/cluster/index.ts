/** The cluster harness: toolbus on a 3-node NATS cluster, each service replica its own process (README.md). */
export type { ClusterProcess } from "./managed-process.js";
export type { NatsNode } from "./nats-cluster.js";
export { SERVICE_ROLES, type ServiceRole } from "./services.js";
export {
  type ClusterOptions,
  type ServiceHandle,
  startCluster,
  type ToolbusCluster,
  untilJetStreamAnswers,
} from "./start-cluster.js";
