/**
 * Every service has the shape docs/development.md's "Writing a service" describes: `src/main.ts`,
 * `src/<name>-service.ts` exporting `start<Name>Service` and `SERVICE_NAME`, `src/definition.ts`
 * exporting the service's one definition, and its handlers' ports in `src/ports.ts` (biome.json
 * keeps handlers off adapters). main.ts only runs the definition, and the all-in-one starts every
 * service from its definition too, so the two cannot drift. A service that drifts is named.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { repoPath } from "../deploy/repo.js";

const services = readdirSync(repoPath("services"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/** `catalog` → `Catalog`. */
const pascal = (name: string) => name[0]!.toUpperCase() + name.slice(1);

/** `<name>Definition` when `src/definition.ts` exports it as a `ServiceDefinition` of its role. */
function definitionOf(name: string): string | undefined {
  const path = repoPath(`services/${name}/src/definition.ts`);
  if (!existsSync(path)) return undefined;
  const text = readFileSync(path, "utf8");
  const exported = `export const ${name}Definition: ServiceDefinition<`;
  return text.includes(exported) && text.includes("role: SERVICE_NAME,") ? `${name}Definition` : undefined;
}

/** Code without comments, blank lines and surrounding blanks. */
const codeOf = (text: string) =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");

/** main.ts is the runner of @toolbus/bus given the definition, and nothing else. */
function mainRunsDefinition(name: string): boolean {
  const path = repoPath(`services/${name}/src/main.ts`);
  if (!existsSync(path)) return false;
  return (
    codeOf(readFileSync(path, "utf8")).join("\n") ===
    [
      'import { runServiceProcess } from "@toolbus/bus";',
      `import { ${name}Definition } from "./definition.js";`,
      `await runServiceProcess(${name}Definition);`,
    ].join("\n")
  );
}

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
        definition: definitionOf(name) !== undefined,
        mainRunsIt: mainRunsDefinition(name),
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
        definition: true,
        mainRunsIt: true,
      })),
    );
    expect(services).toEqual(
      expect.arrayContaining(["approvals", "catalog", "dispatcher", "gateway", "memory"]),
    );
  });

  it("is how the all-in-one starts every service: its definition, through startService", () => {
    const run = readFileSync(repoPath("packages/all-in-one/src/run.ts"), "utf8");
    const shapes = services.map((name) => ({
      name,
      // Started by its definition, never by its start function called by hand.
      definition: new RegExp(`start\\(\\s*${name}Definition,`).test(run),
      byHand: run.includes(`start${pascal(name)}Service(`),
    }));
    expect(shapes).toEqual(services.map((name) => ({ name, definition: true, byHand: false })));
    expect(run).toContain("startService(");
  });
});
