/**
 * The one-line progress display of a running call (stderr, terminals only): a spinner, the
 * tool, the server's latest progress report (a bar when it gave a total), its message, and
 * the elapsed time, cut to fit the terminal so the line never wraps. While the call waits for a
 * human, where to answer it takes the place of the progress.
 */
import { formatDuration } from "./duration.js";
import { displayWidth, formatNumber, oneLine, truncateToWidth } from "./text.js";

export const SPINNER_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"] as const;
export const BAR_WIDTH = 20;
/** How often the display is redrawn (ms); also the spinner's step. */
export const PROGRESS_TICK_MS = 100;

export interface ProgressReport {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export interface ProgressLineInput {
  readonly tool: string;
  readonly elapsedMs: number;
  readonly report?: ProgressReport;
  /** The terminal's columns; the line takes at most `width - 1` so the cursor never wraps. */
  readonly width: number;
  /** The call waits for a human: the line says where to answer instead of the progress. */
  readonly awaitingApproval?: boolean;
}

/** Where a person answers a call that waits for approval. */
export const APPROVAL_HINT =
  "awaiting approval: answer with `toolbus approvals` or in the inbox (/approvals)";

export function formatProgressLine(input: ProgressLineInput): string {
  const frame = SPINNER_FRAMES[Math.floor(input.elapsedMs / PROGRESS_TICK_MS) % SPINNER_FRAMES.length];
  const head = `${frame} ${oneLine(input.tool)}`;
  const waiting = input.awaitingApproval === true;
  const progress = input.report && !waiting ? progressText(input.report) : "";
  const message = waiting ? APPROVAL_HINT : input.report?.message ? oneLine(input.report.message) : "";
  const elapsed = formatDuration(input.elapsedMs);
  const room = Math.max(1, input.width - 1);
  const join = (parts: readonly string[]) => parts.filter((part) => part !== "").join("  ");
  // What gives way first when the line is too long: the message, then the progress, then the tool name.
  const withoutMessage = join([head, progress, elapsed]);
  if (message !== "") {
    const left = room - displayWidth(withoutMessage) - 2;
    if (left >= 4) return join([head, progress, truncateToWidth(message, left), elapsed]);
  }
  if (displayWidth(withoutMessage) <= room) return withoutMessage;
  const headRoom = room - displayWidth(elapsed) - 2;
  return truncateToWidth(join([truncateToWidth(head, headRoom), elapsed]), room);
}

/** `[########------------]  40%  4/10`, or `4` when the server gave no total. */
export function progressText(report: ProgressReport): string {
  const { progress, total } = report;
  if (total === undefined || !(total > 0)) return formatNumber(progress);
  const ratio = Math.min(1, Math.max(0, progress / total));
  const filled = Math.round(ratio * BAR_WIDTH);
  const bar = `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}]`;
  const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
  return `${bar} ${percent}  ${formatNumber(progress)}/${formatNumber(total)}`;
}
