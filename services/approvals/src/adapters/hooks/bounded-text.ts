/**
 * Collecting a hook's output without letting a chatty hook exhaust memory: bytes past the cap are
 * counted and dropped, and the text says how much was cut.
 */

/** What toolbus keeps of one stream of one hook run (stdout, stderr, an HTTP body). */
export const HOOK_OUTPUT_CAP_BYTES = 1024 * 1024;

export class BoundedText {
  readonly #chunks: Buffer[] = [];
  readonly #cap: number;
  #kept = 0;
  #dropped = 0;

  constructor(cap: number = HOOK_OUTPUT_CAP_BYTES) {
    this.#cap = cap;
  }

  push(chunk: Buffer | Uint8Array): void {
    const room = this.#cap - this.#kept;
    if (room <= 0) {
      this.#dropped += chunk.byteLength;
      return;
    }
    const kept = chunk.byteLength <= room ? chunk : chunk.subarray(0, room);
    this.#chunks.push(Buffer.from(kept));
    this.#kept += kept.byteLength;
    this.#dropped += chunk.byteLength - kept.byteLength;
  }

  get full(): boolean {
    return this.#kept >= this.#cap;
  }

  text(): string {
    const text = Buffer.concat(this.#chunks).toString("utf8");
    return this.#dropped === 0 ? text : `${text}\n[… ${this.#dropped} more bytes dropped by toolbus]`;
  }
}
