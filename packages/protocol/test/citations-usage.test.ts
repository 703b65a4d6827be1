import { describe, expect, it } from "vitest";
import { canonicalUuid, parseCitationBodies, usageThreadIds } from "../src/citations/index.js";

const A = "019c6e27-e55b-73d1-87d8-4e01f1f75043";
const B = "019c7714-3b77-74d1-9866-e1f484aae2ab";

function idsBody(...ids: string[]): string {
  return `<rollout_ids>\n${ids.join("\n")}\n</rollout_ids>`;
}

// What codex's ThreadId::try_from (uuid crate Uuid::parse_str) accepts, in canonical form.
const uuidForms: { name: string; text: string; uuid: string | null }[] = [
  { name: "a hyphenated v7 UUID", text: A, uuid: A },
  {
    name: "a v4 UUID",
    text: "f47ac10b-58cc-4372-a567-0e02b2c3d479",
    uuid: "f47ac10b-58cc-4372-a567-0e02b2c3d479",
  },
  {
    name: "the nil UUID",
    text: "00000000-0000-0000-0000-000000000000",
    uuid: "00000000-0000-0000-0000-000000000000",
  },
  { name: "upper-case hex", text: A.toUpperCase(), uuid: A },
  { name: "the simple 32-digit form", text: A.replaceAll("-", ""), uuid: A },
  { name: "the braced form", text: `{${A}}`, uuid: A },
  { name: "the URN form", text: `urn:uuid:${A}`, uuid: A },
  { name: "a non-UUID", text: "not-a-uuid", uuid: null },
  { name: "a hyphen out of place", text: "019c6e27e-55b-73d1-87d8-4e01f1f75043", uuid: null },
  { name: "a non-hex digit", text: "019c6e27-e55b-73d1-87d8-4e01f1f7504g", uuid: null },
  { name: "one digit short", text: A.slice(0, -1), uuid: null },
  { name: "a braced simple form", text: `{${A.replaceAll("-", "")}}`, uuid: null },
  { name: "an upper-case URN prefix", text: `URN:UUID:${A}`, uuid: null },
  { name: "a rollout file name", text: "rollout-2026-02-17T21-23-02-019c6e27.jsonl", uuid: null },
];

describe("canonicalUuid", () => {
  it.each(uuidForms)("reads $name", ({ text, uuid }) => {
    expect(canonicalUuid(text)).toBe(uuid);
  });
});

describe("usageThreadIds", () => {
  it("[57] counts only the rollout ids that are UUIDs", () => {
    const citation = parseCitationBodies([idsBody(A, "not-a-uuid", B)]);
    expect(usageThreadIds(citation)).toEqual([A, B]);
  });

  it("gives no ids for no citation, and none when no id is a UUID", () => {
    const citation = parseCitationBodies(["<citation_entries>\nMEMORY.md:1-2|note=[x]\n</citation_entries>"]);
    expect({ none: usageThreadIds(null), noUuids: usageThreadIds(citation) }).toEqual({
      none: [],
      noUuids: [],
    });
  });

  it("counts a parsed citation's ids once each, since parsing de-duplicates them", () => {
    const bodies = [idsBody(A, A, B), idsBody(A)];
    expect(usageThreadIds(parseCitationBodies(bodies))).toEqual([A, B]);
  });

  it("writes two spellings of one UUID under the same canonical id", () => {
    const citation = parseCitationBodies([idsBody(A, A.toUpperCase())]);
    expect({ rolloutIds: citation?.rolloutIds, usage: usageThreadIds(citation) }).toEqual({
      rolloutIds: [A, A.toUpperCase()],
      usage: [A, A],
    });
  });
});
