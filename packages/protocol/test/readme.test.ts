// README.md documents the subjects, JetStream names and error codes; these tests keep its
// tables and its example in step with the code, both ways.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { INTERNAL_SUBJECTS } from "../src/access.js";
import { ERROR_CODES, RETRYABLE_BY_DEFAULT } from "../src/errors.js";
import { HTTP_STATUS_BY_CODE, HttpRefusal } from "../src/http-status.js";
import * as protocol from "../src/index.js";
import { createSubjects, SUBJECTS, type SubjectSpec } from "../src/subjects.js";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");

/** The rows of the table under `## <heading>` (or `### <heading>`), as records keyed by the header cells. */
function tableUnder(heading: string): Record<string, string>[] {
  const section = readme.split(/^###? /m).find((part) => part.startsWith(`${heading}\n`));
  if (section === undefined) throw new Error(`README.md has no "## ${heading}" section`);
  const lines = section.split("\n").filter((line) => line.startsWith("|"));
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split("|")
      .map((cell) => cell.trim());
  const [header, , ...rows] = lines;
  if (header === undefined) throw new Error(`README.md has no table under "## ${heading}"`);
  const keys = cells(header);
  return rows.map((row) => Object.fromEntries(cells(row).map((cell, i) => [keys[i] ?? `${i}`, cell])));
}

const code = (text: string) => `\`${text}\``;

describe("README.md", () => {
  const rowsOf = (specs: readonly SubjectSpec[]) =>
    specs.map((row) => ({
      subject: code(row.subject),
      kind: row.kind,
      request: code(row.request),
      reply: row.reply === null ? "—" : code(row.reply),
      owner: row.owner,
      users: row.users.join(", "),
      description: row.description,
    }));

  it("has one subjects row per SUBJECTS entry, with the same kind, schemas, owner, users and description", () => {
    expect(tableUnder("Subjects")).toStrictEqual(rowsOf(SUBJECTS));
  });

  it("has one internal subjects row per INTERNAL_SUBJECTS entry", () => {
    expect(tableUnder("Internal subjects")).toStrictEqual(rowsOf(INTERNAL_SUBJECTS));
  });

  it("documents every error code with its default retryability and HTTP status, and no other code", () => {
    const documented = tableUnder("Error codes");
    const rows = documented.map((row) => ({ code: row.code, retryable: row.retryable, http: row.http }));
    const expected = ERROR_CODES.map((errorCode) => ({
      code: code(errorCode),
      retryable: RETRYABLE_BY_DEFAULT[errorCode] ? "yes" : "no",
      http: String(HTTP_STATUS_BY_CODE[errorCode]),
    }));
    expect(rows).toStrictEqual(expected);
    expect(documented.filter((row) => row.meaning === "" || row["used when"] === "")).toStrictEqual([]);
  });

  it("documents every HTTP refusal with its status and code, and no other", () => {
    const rows = tableUnder("HTTP refusals").map((row) => ({
      refusal: row.refusal,
      status: row.status,
      code: row.code,
    }));
    expect(rows).toStrictEqual(
      Object.entries(HttpRefusal).map(([name, refusal]) => ({
        refusal: code(name),
        status: String(refusal.status),
        code: code(refusal.code),
      })),
    );
  });

  it("gives the JetStream names the default prefix produces", () => {
    const s = createSubjects();
    expect(tableUnder("JetStream names")).toStrictEqual([
      { name: "`kv.catalog`", kind: "KV bucket", default: code(s.kv.catalog) },
      { name: "`kv.approvalGrants`", kind: "KV bucket", default: code(s.kv.approvalGrants) },
      { name: "`kv.callHistory`", kind: "KV bucket", default: code(s.kv.callHistory) },
      { name: "`streams.events`", kind: "stream", default: code(s.streams.events.name) },
      { name: "`streams.memory`", kind: "stream", default: code(s.streams.memory.name) },
      { name: "`streams.large`", kind: "stream", default: code(s.streams.large.name) },
    ]);
  });

  it("has an example that imports real exports and states the subjects they give", () => {
    const example = readme.match(/```ts\n([\s\S]*?)```/)?.[1] ?? "";
    const imported = example.match(/import \{([^}]*)\} from "@toolbus\/protocol"/)?.[1] ?? "";
    const names = imported.split(",").map((name) => name.trim());
    expect(names.filter((name) => !(name in protocol))).toStrictEqual([]);

    const s = createSubjects();
    const claims = [...example.matchAll(/^subjects\.(\w+)(?:\("([^"]*)"\))?; \/\/ "([^"]+)"$/gm)];
    expect(claims.length).toBeGreaterThan(0);
    for (const [, property, argument, stated] of claims) {
      const value = (s as unknown as Record<string, unknown>)[property ?? ""];
      const actual = typeof value === "function" ? value(argument) : value;
      expect(actual).toBe(stated);
    }
  });
});
