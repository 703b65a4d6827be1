/**
 * The one rule every catalog reader follows (the dispatcher and the gateway, through
 * CatalogFollower of @toolbus/bus): a value that fails its schema is refused and its key keeps
 * its last good value; a deletion removes the entry.
 */
import { describe, expect, it } from "vitest";
import { type CatalogBucketChange, CatalogCopy, type CatalogServerEntry } from "../src/index.js";

const entry = (server: string, tool: string, revision = 3): CatalogServerEntry => ({
  server,
  status: "ready",
  required: false,
  revision,
  origin: "stdio",
  tools: [{ name: tool, inputSchema: { type: "object" } }],
  resourcesSupported: false,
  listedAt: "2026-01-01T00:00:00.000Z",
});

const put = (key: string, value: unknown): CatalogBucketChange => ({
  key,
  operation: "PUT",
  value: typeof value === "string" ? value : JSON.stringify(value),
});

/** Values a catalog of another version, or a connector with a bug, could write under `server.files`. */
const MALFORMED: Array<[string, CatalogBucketChange]> = [
  ["text that is not JSON", put("server.files", "{not json")],
  ["JSON that is no entry", put("server.files", { tools: "many" })],
  [
    "an entry with a status no reader knows",
    put("server.files", { ...entry("files", "read"), status: "asleep" }),
  ],
  ["an entry naming another server than its key", put("server.files", entry("mail", "send"))],
];

describe("a catalog copy", () => {
  it("sets each server's entry from its key, and removes it when the key is deleted", () => {
    const copy = new CatalogCopy();
    expect(copy.apply(put("server.files", entry("files", "read")))).toMatchObject({
      kind: "entry",
      server: "files",
      previous: undefined,
    });
    expect(copy.server("files")?.tools.map((tool) => tool.name)).toEqual(["read"]);
    expect(copy.apply({ key: "server.files", operation: "DEL", value: "" })).toMatchObject({
      kind: "entry",
      server: "files",
      entry: undefined,
    });
    expect([...copy.entries.keys()]).toEqual([]);
  });

  it.each(MALFORMED)("refuses %s and keeps the server's last good entry", (_, malformed) => {
    const copy = new CatalogCopy();
    copy.apply(put("server.files", entry("files", "read")));
    const update = copy.apply(malformed);
    expect(update).toMatchObject({ kind: "refused", key: "server.files", kept: true });
    expect(update.kind === "refused" && update.problem.length > 0).toBe(true);
    expect(copy.server("files")).toEqual(entry("files", "read"));
    expect([...copy.entries.keys()]).toEqual(["files"]);
  });

  it("refuses a malformed first value: the server has no entry until a good one comes", () => {
    const copy = new CatalogCopy();
    expect(copy.apply(put("server.files", "{not json"))).toMatchObject({ kind: "refused", kept: false });
    expect(copy.server("files")).toBeUndefined();
    copy.apply(put("server.files", entry("files", "read")));
    expect(copy.server("files")?.tools.map((tool) => tool.name)).toEqual(["read"]);
  });

  it("read again from the start, keeps the older copy's good entry for a key whose value is refused", () => {
    const older = new CatalogCopy();
    older.apply(put("server.files", entry("files", "read")));
    older.apply(put("server.mail", entry("mail", "send")));
    const again = new CatalogCopy();
    // `mail` was deleted while nobody watched: it is gone; `files` is now malformed: it stays.
    again.apply(put("server.files", "{not json"), older);
    expect([...again.entries.keys()]).toEqual(["files"]);
    expect(again.server("files")).toEqual(entry("files", "read"));
  });

  it("keeps the last good naming options over options no catalog writes", () => {
    const copy = new CatalogCopy();
    expect(copy.naming).toBeUndefined();
    copy.apply(put("naming", { nameLimit: 64, prefixMcp: false }));
    expect(copy.apply(put("naming", { nameLimit: 3 }))).toMatchObject({ kind: "refused", kept: true });
    expect(copy.apply(put("naming", "[]"))).toMatchObject({ kind: "refused", kept: true });
    expect(copy.naming).toEqual({ nameLimit: 64, prefixMcp: false });
  });

  it("ignores keys that are neither a server entry nor the naming options", () => {
    const copy = new CatalogCopy();
    expect(copy.apply(put("server.bad name", entry("files", "read")))).toEqual({
      kind: "other",
      key: "server.bad name",
    });
    expect(copy.apply(put("elsewhere", {}))).toEqual({ kind: "other", key: "elsewhere" });
    expect([...copy.entries.keys()]).toEqual([]);
  });
});
