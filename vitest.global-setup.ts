import type { TestProject } from "vitest/node";
// The global-setup runner ignores the @toolbus/source condition, hence the relative path.
import { startInfra } from "./packages/testkit/src/infra.js";

export default async function setup(project: TestProject) {
  const infra = await startInfra();
  process.env.NATS_URL = infra.natsUrl;
  process.env.DATABASE_URL = infra.databaseUrl;
  project.provide("natsUrl", infra.natsUrl);
  project.provide("databaseUrl", infra.databaseUrl);
  return () => infra.stop();
}
