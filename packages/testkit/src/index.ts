export { type Infra, startInfra, startThrowawayPostgres, type ThrowawayPostgres } from "./infra.js";
export { cleanupJetStream, isolation, type PgSchema, withPgSchema } from "./isolation.js";
