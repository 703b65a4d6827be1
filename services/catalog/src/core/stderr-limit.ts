/**
 * What of a stdio server's stderr reaches the log: whole lines, each cut at `maxLineBytes`, and at
 * most `maxLines` per `windowMs`; the rest is dropped with a note saying so. A server that floods
 * stderr (one endless line, or a million short ones) can neither fill the log nor our memory: at
 * most one line's worth is ever held.
 */

export interface StderrLimits {
  maxLineBytes: number;
  maxLines: number;
  windowMs: number;
}

export const STDERR_LIMITS: StderrLimits = { maxLineBytes: 4_096, maxLines: 200, windowMs: 10_000 };

export type StderrOutput = { kind: "line"; text: string } | { kind: "dropped"; text: string };

const NEWLINE = 0x0a;

export class StderrLimiter {
  private readonly pending: Uint8Array;
  private pendingBytes = 0;
  /** Bytes of the current line beyond the cap, counted and not kept. */
  private overflow = 0;
  private windowStart: number | undefined;
  private linesInWindow = 0;
  private droppedInWindow = 0;
  private readonly decoder = new TextDecoder();

  constructor(private readonly limits: StderrLimits = STDERR_LIMITS) {
    this.pending = new Uint8Array(limits.maxLineBytes);
  }

  /** The lines and notes a chunk of stderr, read at `now` (ms), gives the log. */
  push(chunk: Uint8Array, now: number): StderrOutput[] {
    const out: StderrOutput[] = [];
    let start = 0;
    while (start <= chunk.length) {
      const end = chunk.indexOf(NEWLINE, start);
      this.keep(chunk.subarray(start, end === -1 ? chunk.length : end));
      if (end === -1) break;
      this.endLine(now, out);
      start = end + 1;
    }
    return out;
  }

  /** The stream ended: a last line without a newline still counts. */
  end(now: number): StderrOutput[] {
    const out: StderrOutput[] = [];
    if (this.pendingBytes > 0 || this.overflow > 0) this.endLine(now, out);
    return out;
  }

  private keep(bytes: Uint8Array): void {
    const room = this.limits.maxLineBytes - this.pendingBytes;
    const kept = Math.min(room, bytes.length);
    this.pending.set(bytes.subarray(0, kept), this.pendingBytes);
    this.pendingBytes += kept;
    this.overflow += bytes.length - kept;
  }

  private endLine(now: number, out: StderrOutput[]): void {
    const text = this.decoder.decode(this.pending.subarray(0, this.pendingBytes)).trimEnd();
    const overflow = this.overflow;
    this.pendingBytes = 0;
    this.overflow = 0;
    if (this.windowStart === undefined || now - this.windowStart >= this.limits.windowMs) {
      if (this.droppedInWindow > 0) {
        out.push({
          kind: "dropped",
          text: `dropped ${this.droppedInWindow} more stderr lines of the MCP server (at most ${this.limits.maxLines} are logged per ${this.limits.windowMs / 1000} s)`,
        });
      }
      this.windowStart = now;
      this.linesInWindow = 0;
      this.droppedInWindow = 0;
    }
    if (text === "" && overflow === 0) return;
    if (this.linesInWindow >= this.limits.maxLines) {
      if (this.droppedInWindow === 0) {
        out.push({
          kind: "dropped",
          text: `the MCP server wrote more than ${this.limits.maxLines} stderr lines in ${this.limits.windowMs / 1000} s; the rest of them are dropped, and counted`,
        });
      }
      this.droppedInWindow++;
      return;
    }
    this.linesInWindow++;
    out.push({
      kind: "line",
      text: overflow === 0 ? text : `${text}… [${overflow} more bytes of this line dropped by toolbus]`,
    });
  }
}
