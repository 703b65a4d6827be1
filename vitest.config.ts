import { fileURLToPath } from "node:url";
import { configDefaults, defineConfig } from "vitest/config";

// Workspace packages resolve to their TypeScript source under this condition, so tests
// need no build. Only ssr conditions count for node tests, and `module` must stay out of
// the list (vite's defaultServerConditions has it; with it @opentelemetry/api 1.9 resolves to an
// ESM build Node cannot load: "Cannot find module '.../build/esm/baggage/utils'").
const ssr = { resolve: { conditions: ["@toolbus/source", "node", "development|production"] } };
const root = fileURLToPath(new URL(".", import.meta.url));
const packageTests = ["packages/*/test/**/*", "services/*/test/**/*", "bench/test/**/*"];

// `expect.poll` waits for something real processes (servers, a browser) do; its default 1 s
// fails on a loaded machine, so it waits as long as the tests' own `eventually` helpers.
const EVENTUALLY = { timeout: 15_000, interval: 50 };

// CI asks for a JSON report beside the console one, to print its `N passed, N failed` line.
const jsonReport = process.env.TOOLBUS_TEST_REPORT;

export default defineConfig({
  ssr,
  test: {
    reporters: jsonReport ? ["default", ["json", { outputFile: jsonReport }]] : ["default"],
    // Runs once for all projects: finds or starts NATS and Postgres (packages/testkit).
    globalSetup: [`${root}vitest.global-setup.ts`],
    projects: [
      {
        ssr,
        test: {
          name: "unit",
          root,
          include: packageTests.map((glob) => `${glob}.test.ts`),
          exclude: packageTests.map((glob) => `${glob}.int.test.ts`),
          testTimeout: 10_000,
        },
      },
      {
        ssr,
        test: {
          name: "integration",
          root,
          include: packageTests.map((glob) => `${glob}.int.test.ts`),
          testTimeout: 60_000,
          // Suites start real services (catalog, dispatcher, MCP servers) in their hooks.
          hookTimeout: 180_000,
          expect: { poll: EVENTUALLY },
        },
      },
      {
        ssr,
        test: {
          name: "e2e",
          root,
          include: ["test/**/*.test.ts"],
          // The defaults (node_modules above all) stay excluded; the cluster tests have their own project.
          exclude: [...configDefaults.exclude, "test/cluster/**"],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          expect: { poll: EVENTUALLY },
        },
      },
      {
        ssr,
        test: {
          name: "cluster",
          root,
          include: ["test/cluster/**/*.test.ts"],
          // Each file starts a whole cluster (3 nodes, 10 services): one at a time on 2 cores.
          fileParallelism: false,
          testTimeout: 60_000,
          // The chaos file's scenarios run in its hook: bounded, but long beside the rest of the suite.
          hookTimeout: 1_500_000,
        },
      },
    ],
  },
});
