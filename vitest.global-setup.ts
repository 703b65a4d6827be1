import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
// The global-setup runner ignores the @toolbus/source condition, hence the relative path.
import { startInfra } from "./packages/testkit/src/infra.js";

export default async function setup(project: TestProject) {
  const infra = await startInfra();
  process.env.NATS_URL = infra.natsUrl;
  process.env.DATABASE_URL = infra.databaseUrl;
  project.provide("natsUrl", infra.natsUrl);
  project.provide("databaseUrl", infra.databaseUrl);
  // toolbus keeps a private state directory per project under XDG_STATE_HOME (the CLI's seed,
  // stdio servers' own directories): the run's own, not the home of whoever runs the tests.
  const state = mkdtempSync(join(tmpdir(), "toolbus-test-state-"));
  process.env.XDG_STATE_HOME = state;
  return async () => {
    await infra.stop();
    rmSync(state, { recursive: true, force: true });
  };
}
