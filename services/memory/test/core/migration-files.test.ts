import { describe, expect, it } from "vitest";
import { type MigrationPlanResult, planMigrations } from "../../src/core/migration-files.js";

describe("planMigrations", () => {
  const cases: Array<{ name: string; files: string[]; applied: string[]; result: MigrationPlanResult }> = [
    {
      name: "runs every file in name order on an empty database",
      files: ["0002_more.sql", "README.md", "0001_memory.sql"],
      applied: [],
      result: { ok: true, plan: { pending: ["0001_memory.sql", "0002_more.sql"], unknownApplied: [] } },
    },
    {
      name: "runs only what was not applied",
      files: ["0001_memory.sql", "0002_more.sql"],
      applied: ["0001"],
      result: { ok: true, plan: { pending: ["0002_more.sql"], unknownApplied: [] } },
    },
    {
      name: "reports versions a newer service applied",
      files: ["0001_memory.sql"],
      applied: ["0001", "0003"],
      result: { ok: true, plan: { pending: [], unknownApplied: ["0003"] } },
    },
    {
      name: "refuses a misnamed file",
      files: ["0001_memory.sql", "2_more.sql"],
      applied: [],
      result: {
        ok: false,
        error:
          "migration file 2_more.sql is not named NNNN_name.sql (four digits, then lower-case letters, digits and _); rename it",
      },
    },
    {
      name: "refuses two files with one version",
      files: ["0001_memory.sql", "0001_other.sql"],
      applied: [],
      result: {
        ok: false,
        error:
          "migration files 0001_memory.sql and 0001_other.sql share version 0001; give each its own number",
      },
    },
  ];

  it.each(cases)("$name", ({ files, applied, result }) => {
    expect(planMigrations(files, applied)).toEqual(result);
  });
});
