/**
 * Every service has the shape the root README's "Writing a service" describes: `src/main.ts`,
 * `src/<name>-service.ts` exporting `start<Name>Service` and `SERVICE_NAME`, and its handlers'
 * ports in `src/ports.ts` (biome.json keeps handlers off adapters). A service that drifts is named.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { repoPath } from "../deploy/repo.js";

const services = readdirSync(repoPath("services"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/** `catalog` → `Catalog`. */
const pascal = (name: string) => name[0]!.toUpperCase() + name.slice(1);

describe("the service template", () => {
  it("is what every service under services/ follows", () => {
    const shapes = services.map((name) => {
      const entry = repoPath(`services/${name}/src/${name}-service.ts`);
      const text = existsSync(entry) ? readFileSync(entry, "utf8") : "";
      return {
        name,
        main: existsSync(repoPath(`services/${name}/src/main.ts`)),
        ports: existsSync(repoPath(`services/${name}/src/ports.ts`)),
        start: text.includes(`export async function start${pascal(name)}Service(`),
        serviceName: text.includes(`export const SERVICE_NAME = "${name}";`),
        running: /extends RunningService \{/.test(text),
      };
    });
    expect(shapes).toEqual(
      services.map((name) => ({
        name,
        main: true,
        ports: true,
        start: true,
        serviceName: true,
        running: true,
      })),
    );
    expect(services).toEqual(
      expect.arrayContaining(["approvals", "catalog", "dispatcher", "gateway", "memory"]),
    );
  });
});
