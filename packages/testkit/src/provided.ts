import { inject } from "vitest";

declare module "vitest" {
  interface ProvidedContext {
    natsUrl: string;
    databaseUrl: string;
  }
}

/** The NATS and Postgres URLs the root global setup found or started. */
export function provided(): { natsUrl: string; databaseUrl: string } {
  return { natsUrl: inject("natsUrl"), databaseUrl: inject("databaseUrl") };
}
