/**
 * Canonical JSON: object keys sorted (by UTF-16 code unit, as RFC 8785 does) at every depth,
 * no whitespace, strings escaped exactly as `JSON.stringify` escapes them. Written straight to
 * UTF-8 bytes in a reused buffer, because every catalog build hashes every tool's canonical
 * JSON and building ten thousand strings piece by piece is most of that build's work.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const HEX = "0123456789abcdef";
/** The short escapes `JSON.stringify` uses for control chars; the rest become `\u00XX`. */
const SHORT_ESCAPES: ReadonlyMap<number, number> = new Map([
  [0x08, 0x62], // \b
  [0x09, 0x74], // \t
  [0x0a, 0x6e], // \n
  [0x0c, 0x66], // \f
  [0x0d, 0x72], // \r
]);
const INITIAL_CAPACITY = 64 * 1024;
/** A buffer grown past this for one huge value is dropped afterwards rather than kept. */
const KEPT_CAPACITY = 1024 * 1024;
/** Distinct lengths whose buffer views are kept for reuse. */
const MAX_VIEWS = 4096;

/** Omitted as an object member, `null` as an array element (as in `JSON.stringify`). */
export function isSkippedMember(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

const hasOwn = Object.prototype.hasOwnProperty;
/** Objects with more members than this are sorted with `Array.prototype.sort`. */
const INSERTION_SORT_MAX = 32;

/** Appends canonical JSON as UTF-8; `bytes()` views what was written since `reset()`. */
export class CanonicalJsonWriter {
  private buffer: Uint8Array = new Uint8Array(INITIAL_CAPACITY);
  private length = 0;
  /** Views of the buffer by length: most tools' JSON lengths repeat, and a view is an allocation. */
  private views = new Map<number, Uint8Array>();
  /**
   * The members of the objects being written, innermost last: each object sorts its own
   * segment. Reused, so writing allocates nothing per object.
   */
  private readonly memberKeys: string[] = [];
  private readonly memberValues: unknown[] = [];
  private membersEnd = 0;

  reset(): void {
    if (this.buffer.length > KEPT_CAPACITY) this.replaceBuffer(new Uint8Array(INITIAL_CAPACITY));
    this.length = 0;
    this.membersEnd = 0;
  }

  bytes(): Uint8Array {
    let view = this.views.get(this.length);
    if (view === undefined) {
      if (this.views.size >= MAX_VIEWS) this.views.clear();
      view = this.buffer.subarray(0, this.length);
      this.views.set(this.length, view);
    }
    return view;
  }

  value(value: unknown): void {
    switch (typeof value) {
      case "string":
        this.string(value);
        return;
      case "number":
        this.ascii(Number.isFinite(value) ? `${value}` : "null");
        return;
      case "boolean":
        this.ascii(value ? "true" : "false");
        return;
      case "object":
        if (value === null) this.ascii("null");
        else if (Array.isArray(value)) this.array(value);
        else this.object(value as Record<string, unknown>);
        return;
      default:
        // undefined, functions and symbols become null; a bigint throws, as in JSON.stringify.
        this.ascii(JSON.stringify(value) ?? "null");
    }
  }

  /** `"key":`, to open a member of an object this writer's caller is writing. */
  key(key: string, first: boolean): void {
    this.reserve(1);
    this.buffer[this.length++] = first ? 0x7b : 0x2c; // { or ,
    this.string(key);
    this.reserve(1);
    this.buffer[this.length++] = 0x3a; // :
  }

  /** Closes an object opened by `key()`, or writes `{}` when no member was written. */
  endObject(empty: boolean): void {
    this.ascii(empty ? "{}" : "}");
  }

  private array(items: readonly unknown[]): void {
    this.ascii("[");
    for (let i = 0; i < items.length; i += 1) {
      if (i > 0) this.ascii(",");
      this.value(items[i]);
    }
    this.ascii("]");
  }

  /** Own enumerable members (as `Object.keys` lists them), by key in UTF-16 code unit order. */
  private object(record: Record<string, unknown>): void {
    const keys = this.memberKeys;
    const values = this.memberValues;
    const start = this.membersEnd;
    let end = start;
    for (const key in record) {
      if (!hasOwn.call(record, key)) continue;
      keys[end] = key;
      values[end] = record[key];
      end += 1;
    }
    this.membersEnd = end;
    if (end - start > INSERTION_SORT_MAX) sortMembersLarge(keys, values, start, end);
    else sortMembers(keys, values, start, end);
    let first = true;
    for (let i = start; i < end; i += 1) {
      const member = values[i];
      values[i] = undefined; // the writer outlives the value: hold no reference to it
      if (isSkippedMember(member)) continue;
      this.key(keys[i]!, first);
      first = false;
      this.value(member);
    }
    this.membersEnd = start;
    this.endObject(first);
  }

  private ascii(text: string): void {
    this.reserve(text.length);
    for (let i = 0; i < text.length; i += 1) this.buffer[this.length++] = text.charCodeAt(i);
  }

  /** A JSON string literal in UTF-8; lone surrogates are escaped, as `JSON.stringify` does. */
  private string(text: string): void {
    // At most 6 bytes per UTF-16 code unit (`\uXXXX`), plus the quotes.
    this.reserve(text.length * 6 + 2);
    const out = this.buffer;
    let at = this.length;
    out[at++] = QUOTE;
    for (let i = 0; i < text.length; i += 1) {
      const unit = text.charCodeAt(i);
      if (unit >= 0x20 && unit < 0x80 && unit !== QUOTE && unit !== BACKSLASH) {
        out[at++] = unit;
      } else if (unit < 0x80) {
        out[at++] = BACKSLASH;
        const short = unit === QUOTE || unit === BACKSLASH ? unit : SHORT_ESCAPES.get(unit);
        if (short !== undefined) {
          out[at++] = short;
        } else {
          at = writeUnicodeEscape(out, at, unit);
        }
      } else if (unit < 0x800) {
        out[at++] = 0xc0 | (unit >> 6);
        out[at++] = 0x80 | (unit & 0x3f);
      } else if (unit < 0xd800 || unit > 0xdfff) {
        out[at++] = 0xe0 | (unit >> 12);
        out[at++] = 0x80 | ((unit >> 6) & 0x3f);
        out[at++] = 0x80 | (unit & 0x3f);
      } else {
        const next = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
        if (unit < 0xdc00 && next >= 0xdc00 && next <= 0xdfff) {
          const codePoint = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
          out[at++] = 0xf0 | (codePoint >> 18);
          out[at++] = 0x80 | ((codePoint >> 12) & 0x3f);
          out[at++] = 0x80 | ((codePoint >> 6) & 0x3f);
          out[at++] = 0x80 | (codePoint & 0x3f);
          i += 1;
        } else {
          out[at++] = BACKSLASH;
          at = writeUnicodeEscape(out, at, unit);
        }
      }
    }
    out[at++] = QUOTE;
    this.length = at;
  }

  private reserve(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.buffer.length) return;
    const grown = new Uint8Array(Math.max(needed, this.buffer.length * 2));
    grown.set(this.buffer.subarray(0, this.length));
    this.replaceBuffer(grown);
  }

  private replaceBuffer(buffer: Uint8Array): void {
    this.buffer = buffer;
    this.views = new Map();
  }
}

/** Insertion sort of `keys[start..end)` with `values` alongside; objects have a handful of keys, often in order. */
function sortMembers(keys: string[], values: unknown[], start: number, end: number): void {
  for (let i = start + 1; i < end; i += 1) {
    const key = keys[i]!;
    const value = values[i];
    let j = i - 1;
    for (; j >= start && keys[j]! > key; j -= 1) {
      keys[j + 1] = keys[j]!;
      values[j + 1] = values[j];
    }
    keys[j + 1] = key;
    values[j + 1] = value;
  }
}

function sortMembersLarge(keys: string[], values: unknown[], start: number, end: number): void {
  const members = keys.slice(start, end).map((key, i) => ({ key, value: values[start + i] }));
  members.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  members.forEach(({ key, value }, i) => {
    keys[start + i] = key;
    values[start + i] = value;
  });
}

/** `uXXXX` (the backslash is already written), lowercase hex as in `JSON.stringify`. */
function writeUnicodeEscape(out: Uint8Array, at: number, unit: number): number {
  out[at] = 0x75; // u
  out[at + 1] = HEX.charCodeAt(unit >> 12);
  out[at + 2] = HEX.charCodeAt((unit >> 8) & 0xf);
  out[at + 3] = HEX.charCodeAt((unit >> 4) & 0xf);
  out[at + 4] = HEX.charCodeAt(unit & 0xf);
  return at + 5;
}

let idle: CanonicalJsonWriter | undefined = new CanonicalJsonWriter();

/**
 * The shared writer, reset; hand it back with `releaseWriter`. A nested call (a getter that
 * serializes while being serialized) gets a writer of its own.
 */
export function acquireWriter(): CanonicalJsonWriter {
  const writer = idle ?? new CanonicalJsonWriter();
  idle = undefined;
  writer.reset();
  return writer;
}

export function releaseWriter(writer: CanonicalJsonWriter): void {
  idle = writer;
}

const decoder = new TextDecoder();

/**
 * JSON with object keys sorted (by UTF-16 code unit, as RFC 8785 does) at every depth and no
 * whitespace. `undefined` members are omitted and non-finite numbers become `null`, as in
 * `JSON.stringify`; `toJSON` methods are not called.
 */
export function canonicalJson(value: unknown): string {
  const writer = acquireWriter();
  try {
    writer.value(value);
    return decoder.decode(writer.bytes());
  } finally {
    releaseWriter(writer);
  }
}
