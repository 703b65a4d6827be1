/** @toolbus/memory: the memory service, startable in-process, and its own `parked` subject. */

export type { IngestStats } from "./adapters/nats/ingest-loop.js";
export { loadMemoryConfig, type MemoryConfig, memoryConfigSchema } from "./config.js";
export { memoryDefinition } from "./definition.js";
export {
  type MemoryParkedRequest,
  MemoryParkedRequestSchema,
  type MemoryParkedResult,
  MemoryParkedResultSchema,
  ParkedMessageSchema,
} from "./handlers/parked.js";
export {
  type MemoryService,
  type MemoryServiceDeps,
  type MemoryServiceStats,
  SERVICE_NAME,
  startMemoryService,
} from "./memory-service.js";
export { MEMORY_METRICS } from "./metrics.js";
