export { type Infra, startInfra } from "./infra.js";
export { cleanupJetStream, isolation, type PgSchema, withPgSchema } from "./isolation.js";
