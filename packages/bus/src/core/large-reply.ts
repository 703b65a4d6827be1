/**
 * Where a reply larger than one NATS message is stored, and how its small stand-in names it.
 * Pure: subjects, the header's text, the chunk plan.
 *
 * The reply is stored in the large-replies stream in chunks below max_payload, under
 * `<prefix>.large.<recipient>.<id>.<index>`: `<recipient>` is the identity the request names as
 * its reader (`Toolbus-Reader`), `_` for a request that names none, so an identity's account lets
 * it read the replies addressed to it and no others. The small reply
 * carries the header `Toolbus-Large-Reply: <prefix>.large.<recipient>.<id>; chunks=…; bytes=…;
 * sha256=…`, which says everything the reader checks.
 */
import { createSubjects, type Subjects } from "@toolbus/protocol";

/** The header of a small reply that stands for a stored one. */
export const LARGE_REPLY_HEADER = "Toolbus-Large-Reply";

/** The recipient token of a request that names no reader (a client that is not a toolbus bus). */
export const ANY_RECIPIENT = "_";

/** One stored reply: where its chunks are, how many, and what they must add up to. */
export interface StoredReply {
  prefix: string;
  /** An identity's name, or `_` (see {@link readerOf}). */
  recipient: string;
  /** A nuid: letters and digits. */
  id: string;
  chunks: number;
  bytes: number;
  /** SHA-256 of the whole payload, lowercase hex. */
  sha256: string;
}

/**
 * The header with which a request names the identity that reads its reply (`dispatcher`,
 * `connector-github`): a large reply is stored under that name, where that identity's account may
 * read it and no other's. Naming another identity only stores a reply its asker cannot read.
 */
export const READER_HEADER = "Toolbus-Reader";

const READER_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** Who reads the reply of a request with these headers: its `Toolbus-Reader`, or `_` without one. */
export function readerOf(headers: { get(name: string): string } | undefined): string {
  const named = headers?.get(READER_HEADER) ?? "";
  return READER_PATTERN.test(named) ? named : ANY_RECIPIENT;
}

const subjectsByPrefix = new Map<string, Subjects>();
/** The names of a prefix, built once: a reply is cut in many chunks. */
export function subjectsOf(prefix: string): Subjects {
  let subjects = subjectsByPrefix.get(prefix);
  if (subjects === undefined) {
    subjects = createSubjects(prefix);
    subjectsByPrefix.set(prefix, subjects);
  }
  return subjects;
}

/** `<prefix>.large.<recipient>.<id>`: where the reply's chunks are. */
export function storedReplySubject(reply: Pick<StoredReply, "prefix" | "recipient" | "id">): string {
  return subjectsOf(reply.prefix).largeReply(reply.recipient, reply.id);
}

/** The subject of one chunk: `<prefix>.large.<recipient>.<id>.<index>`. */
export function chunkSubject(reply: Pick<StoredReply, "prefix" | "recipient" | "id">, index: number): string {
  return `${storedReplySubject(reply)}.${index}`;
}

/** Room kept below max_payload in each chunk for its headers and JetStream's own. */
const CHUNK_HEADROOM_BYTES = 8 * 1024;
/** Larger chunks save round trips but not memory: 1 MiB is NATS's default max_payload. */
const MAX_CHUNK_BYTES = 1024 * 1024;

/** The size of each chunk (the last may be shorter) on a server with this max_payload. */
export function chunkBytes(maxPayload: number): number {
  return Math.max(1024, Math.min(MAX_CHUNK_BYTES, maxPayload - CHUNK_HEADROOM_BYTES));
}

export function chunkCount(bytes: number, chunk: number): number {
  return Math.max(1, Math.ceil(bytes / chunk));
}

/** The header's value. */
export function formatStoredReply(reply: StoredReply): string {
  return `${storedReplySubject(reply)}; chunks=${reply.chunks}; bytes=${reply.bytes}; sha256=${reply.sha256}`;
}

const HEADER_PATTERN =
  /^([A-Za-z0-9_-]+)\.large\.([A-Za-z0-9_-]+)\.([A-Za-z0-9]+); chunks=(\d+); bytes=(\d+); sha256=([0-9a-f]{64})$/;

/** The header's value read back; a string saying what is wrong when it is not one. */
export function parseStoredReply(value: string): StoredReply | string {
  const match = HEADER_PATTERN.exec(value);
  if (!match) {
    return `the ${LARGE_REPLY_HEADER} header "${value.slice(0, 200)}" is not "<prefix>.large.<recipient>.<id>; chunks=<n>; bytes=<n>; sha256=<hex>"`;
  }
  const [, prefix, recipient, id, chunks, bytes, sha256] = match as unknown as string[];
  const reply = {
    prefix: prefix as string,
    recipient: recipient as string,
    id: id as string,
    chunks: Number(chunks),
    bytes: Number(bytes),
    sha256: sha256 as string,
  };
  if (reply.chunks < 1 || reply.chunks > reply.bytes) {
    return `the ${LARGE_REPLY_HEADER} header names ${reply.chunks} chunk(s) for ${reply.bytes} bytes`;
  }
  return reply;
}

/** A stored reply as a call record keeps it (JSON): the header's value. */
export function isStoredReply(value: unknown): value is StoredReply {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r.prefix === "string" &&
    typeof r.recipient === "string" &&
    typeof r.id === "string" &&
    typeof r.chunks === "number" &&
    typeof r.bytes === "number" &&
    typeof r.sha256 === "string"
  );
}
