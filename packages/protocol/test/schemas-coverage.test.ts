import { describe, expect, it } from "vitest";
import * as schemas from "../src/schemas/index.js";
import { SUBJECTS } from "../src/subjects.js";
import { APPROVAL_CASES } from "./schemas-cases-approvals.js";
import { CALL_CASES } from "./schemas-cases-calls.js";
import { CATALOG_CASES } from "./schemas-cases-catalog.js";
import { MEMORY_CASES } from "./schemas-cases-memory.js";

const ALL_CASES = { ...CATALOG_CASES, ...CALL_CASES, ...APPROVAL_CASES, ...MEMORY_CASES };

describe("the schema tables", () => {
  it("have a sample for every request, reply and event schema that SUBJECTS names", () => {
    const named = SUBJECTS.flatMap((row) => (row.reply === null ? [row.request] : [row.request, row.reply]));
    expect(named.filter((name) => !(name in ALL_CASES))).toStrictEqual([]);
  });

  it("name only schemas the package exports", () => {
    const names = Object.keys(ALL_CASES);
    expect(names.filter((name) => !(`${name}Schema` in schemas))).toStrictEqual([]);
  });
});
