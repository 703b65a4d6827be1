/**
 * docs/contract.md is the prose version of the bus contract; the code is its source. These
 * checks keep the document's names in step with the code both ways: every subject, KV bucket,
 * object store, error code and identity the code defines is in the document, and the document
 * names none the code does not.
 */
import { readFileSync } from "node:fs";
import {
  BUCKETS,
  createSubjects,
  ERROR_CODES,
  INTERNAL_SUBJECTS,
  ROLES,
  renderAccessMatrix,
  SUBJECTS,
} from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { repoPath } from "../deploy/repo.js";

const contract = readFileSync(repoPath("docs/contract.md"), "utf8");

/** The text of the section under `heading` (any level), up to the next heading of any level. */
function section(heading: string): string {
  const start = contract.search(new RegExp(`^#+ ${heading}\\n`, "m"));
  if (start < 0) throw new Error(`docs/contract.md has no "${heading}" section`);
  const rest = contract.slice(start).split("\n").slice(1).join("\n");
  const end = rest.search(/^#+ /m);
  return end < 0 ? rest : rest.slice(0, end);
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

describe("docs/contract.md", () => {
  it("names every subject of SUBJECTS and INTERNAL_SUBJECTS, and no other", () => {
    // `toolbus.events.>` is the events stream's subject filter; `toolbus.toml` the config file.
    const named = [...contract.matchAll(/`(toolbus\.[A-Za-z0-9_.<>]+)`/g)]
      .map(([, subject]) => subject ?? "")
      .filter((subject) => subject !== "toolbus.events.>" && subject !== "toolbus.toml");
    expect(sorted(named)).toStrictEqual(
      sorted([...SUBJECTS, ...INTERNAL_SUBJECTS].map((row) => row.subject)),
    );
  });

  it("names every KV bucket by its prefix form, and no other", () => {
    const stores = BUCKETS.map((spec) => spec.bucket);
    const named = [...contract.matchAll(/`<prefix>_([a-z_]+)`/g)].map(([, name]) => `toolbus_${name}`);
    expect(sorted(named)).toStrictEqual(sorted(stores));
  });

  it("lists the closed set of error codes, in the protocol's order", () => {
    const listed = [...section("Error codes").matchAll(/`([a-z_]+)`/g)].map(([, code]) => code);
    expect(listed.slice(0, ERROR_CODES.length)).toStrictEqual([...ERROR_CODES]);
  });

  it("holds the permission matrix the access tables give, as renderAccessMatrix writes it", () => {
    const block = /<!-- access-matrix:start -->\n```text\n([\s\S]*?)```\n<!-- access-matrix:end -->/.exec(
      contract,
    );
    expect(block?.[1], "regenerate the block in docs/contract.md from renderAccessMatrix").toBe(
      renderAccessMatrix(createSubjects("toolbus")),
    );
  });

  it("describes every NATS identity, and no other", () => {
    const roles = [...section("Identities").matchAll(/^\| `([a-z]+)`\s*\|/gm)].map(([, role]) => role);
    expect(roles).toStrictEqual([...ROLES]);
  });
});
