import { describe, expect, it } from "vitest";
import {
  chunkBytes,
  chunkCount,
  chunkSubject,
  formatStoredReply,
  parseStoredReply,
  READER_HEADER,
  readerOf,
} from "../../src/core/large-reply.js";

const reply = {
  prefix: "tenant-a",
  recipient: "gateway",
  id: "ABC123",
  chunks: 3,
  bytes: 2_500_000,
  sha256: "a".repeat(64),
};

describe("the recipient of a stored reply", () => {
  const headers = (value: string | undefined) => ({
    get: (name: string) => (name === READER_HEADER ? (value ?? "") : ""),
  });

  it("is the identity the request names as its reader", () => {
    expect([readerOf(headers("gateway")), readerOf(headers("connector-github"))]).toEqual([
      "gateway",
      "connector-github",
    ]);
  });

  it("is `_` for a request that names none, or names something that is no identity's name", () => {
    expect({
      none: readerOf(undefined),
      empty: readerOf(headers("")),
      dotted: readerOf(headers("gateway.x")),
      wildcard: readerOf(headers("*")),
    }).toEqual({ none: "_", empty: "_", dotted: "_", wildcard: "_" });
  });
});

describe("the Toolbus-Large-Reply header", () => {
  it("names where the chunks are, how many, their bytes and digest, and reads back the same", () => {
    const header = formatStoredReply(reply);
    expect(header).toBe(`tenant-a.large.gateway.ABC123; chunks=3; bytes=2500000; sha256=${"a".repeat(64)}`);
    expect(parseStoredReply(header)).toEqual(reply);
    expect(chunkSubject(reply, 2)).toBe("tenant-a.large.gateway.ABC123.2");
  });

  it("is refused, saying what it should be, when it is anything else", () => {
    expect({
      object: parseStoredReply("toolbus_large_replies/ABC"),
      wildcard: parseStoredReply(`p.large.*.ABC; chunks=1; bytes=10; sha256=${"a".repeat(64)}`),
      shortDigest: parseStoredReply("p.large.gateway.ABC; chunks=1; bytes=10; sha256=abc"),
      noChunks: parseStoredReply(`p.large.gateway.ABC; chunks=0; bytes=10; sha256=${"a".repeat(64)}`),
      moreChunksThanBytes: parseStoredReply(
        `p.large.gateway.ABC; chunks=11; bytes=10; sha256=${"a".repeat(64)}`,
      ),
    }).toEqual({
      object: expect.stringMatching(
        /^the Toolbus-Large-Reply header "toolbus_large_replies\/ABC" is not "<prefix>\.large/,
      ),
      wildcard: expect.stringMatching(
        /is not "<prefix>\.large\.<recipient>\.<id>; chunks=<n>; bytes=<n>; sha256=<hex>"$/,
      ),
      shortDigest: expect.stringMatching(/is not "<prefix>/),
      noChunks: "the Toolbus-Large-Reply header names 0 chunk(s) for 10 bytes",
      moreChunksThanBytes: "the Toolbus-Large-Reply header names 11 chunk(s) for 10 bytes",
    });
  });
});

describe("chunks", () => {
  it("stay below max_payload with room for headers, at most 1 MiB, and cover every byte", () => {
    expect({
      defaultServer: chunkBytes(1024 * 1024),
      bigServer: chunkBytes(8 * 1024 * 1024),
      smallServer: chunkBytes(64 * 1024),
      fifteenMiB: chunkCount(15 * 1024 * 1024, chunkBytes(1024 * 1024)),
      exact: chunkCount(4096, 1024),
      empty: chunkCount(0, 1024),
    }).toEqual({
      defaultServer: 1024 * 1024 - 8 * 1024,
      bigServer: 1024 * 1024,
      smallServer: 56 * 1024,
      fifteenMiB: 16,
      exact: 4,
      empty: 1,
    });
  });
});
