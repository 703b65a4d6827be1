/**
 * Rewrites the data of server-sent events as they stream past, keeping everything else (ids,
 * event names, retry fields, comments) as it was. Text goes in as it arrives, in any pieces;
 * complete events come out, and at most one incomplete event is held (the transport caps an
 * event's size before this sees it).
 */
export class SseDataRewriter {
  private buffer = "";

  constructor(private readonly rewrite: (data: string) => string) {}

  /** The complete events in what has arrived so far, rewritten. */
  push(text: string): string {
    // Line ends may be CRLF, LF or CR; a CR at the very end may be the first half of a CRLF.
    this.buffer = (this.buffer + text).replace(/\r\n|\r(?!$)/g, "\n");
    let out = "";
    for (;;) {
      const end = this.buffer.indexOf("\n\n");
      if (end === -1) break;
      out += `${this.rewriteEvent(this.buffer.slice(0, end))}\n\n`;
      this.buffer = this.buffer.slice(end + 2);
    }
    return out;
  }

  /** The stream ended: what is left is passed on as it is (an unterminated event is never dispatched). */
  end(): string {
    const rest = this.buffer.replace(/\r$/, "\n");
    this.buffer = "";
    return rest;
  }

  private rewriteEvent(block: string): string {
    const lines = block.split("\n");
    const data = lines
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
    if (data.length === 0) return block;
    const joined = data.join("\n");
    const rewritten = this.rewrite(joined);
    if (rewritten === joined) return block;
    // The rewritten data takes the place of the first data line; the other data lines go.
    const out: string[] = [];
    let placed = false;
    for (const line of lines) {
      if (!line.startsWith("data:")) out.push(line);
      else if (!placed) {
        out.push(...rewritten.split("\n").map((part) => `data: ${part}`));
        placed = true;
      }
    }
    return out.join("\n");
  }
}
