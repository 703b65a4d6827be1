/**
 * Why a stdio server that failed to start failed, in its own words: a server started with `npx`
 * that cannot be fetched says `npm error 404 Not Found` on stderr, while the MCP client sees only
 * "Connection closed". The last lines of stderr are kept (bounded), and the most telling one —
 * the last that reads as an error, else the last — joins the start-up error.
 */

/** Lines kept: enough to reach past a stack trace's last frames, small enough to hold anywhere. */
const KEPT_LINES = 8;
const MAX_LINE = 300;
const ERROR_WORDS =
  /\b(error|err!|not found|cannot|can't|could not|denied|no such|enoent|eacces|fatal|failed)\b/i;
/** Lines that say nothing of their own: a stack frame, npm's log pointers. */
const NOISE = /^(at\s|npm (error|ERR!) (A complete log|\s*$))/i;

export class StderrTail {
  readonly #lines: string[] = [];

  push(line: string): void {
    const text = line.trim();
    if (text === "") return;
    this.#lines.push(text.length > MAX_LINE ? `${text.slice(0, MAX_LINE - 1)}…` : text);
    if (this.#lines.length > KEPT_LINES) this.#lines.shift();
  }

  /** The line that best says why: the last error-like one that is not noise, else the last. */
  reason(): string | undefined {
    const meaningful = this.#lines.filter((line) => !NOISE.test(line));
    return meaningful.findLast((line) => ERROR_WORDS.test(line)) ?? meaningful.at(-1);
  }
}

/** The start-up error with the server's own reason, when it gave one. */
export function withStderrReason(message: string, reason: string | undefined): string {
  return reason === undefined ? message : `${message} (the server's stderr: ${reason})`;
}
