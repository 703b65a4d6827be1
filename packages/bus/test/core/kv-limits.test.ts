import { describe, expect, it } from "vitest";
import { type KvStreamLimits, kvStreamChanges } from "../../src/core/kv-limits.js";

const current: KvStreamLimits = {
  max_msgs_per_subject: 1,
  max_age: 0,
  max_bytes: -1,
  max_msg_size: -1,
  num_replicas: 1,
  duplicate_window: 120_000_000_000,
};

describe("kvStreamChanges", () => {
  it.each([
    { name: "changes nothing when no option is given", wanted: {}, expected: {} },
    { name: "changes nothing when the options already hold", wanted: { history: 1, ttl: 0 }, expected: {} },
    {
      name: "maps history to max_msgs_per_subject",
      wanted: { history: 5 },
      expected: { max_msgs_per_subject: 5 },
    },
    {
      name: "maps a ttl in ms to max_age in ns, shortening the duplicate window to fit",
      wanted: { ttl: 1500 },
      expected: { max_age: 1_500_000_000, duplicate_window: 1_500_000_000 },
    },
    {
      name: "keeps a duplicate window that already fits the new ttl",
      wanted: { ttl: 600_000 },
      expected: { max_age: 600_000_000_000 },
    },
    { name: "changes nothing when entries already never expire", wanted: { ttl: 0 }, expected: {} },
    {
      name: "maps every size limit",
      wanted: { max_bytes: 1024, maxValueSize: 64, replicas: 3 },
      expected: { max_bytes: 1024, max_msg_size: 64, num_replicas: 3 },
    },
    {
      name: "sets a description that differs",
      wanted: { description: "catalog" },
      expected: { description: "catalog" },
    },
  ])("$name", ({ wanted, expected }) => {
    expect(kvStreamChanges(wanted, current)).toEqual(expected);
  });
});
