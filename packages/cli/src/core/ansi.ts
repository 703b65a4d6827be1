/**
 * Colors: on only when the stream is a terminal and NO_COLOR is not set (FORCE_COLOR turns
 * them on for a pipe), and the few styles the CLI uses. Disabled styles return the text as is.
 */

export interface Paint {
  readonly enabled: boolean;
  bold(text: string): string;
  dim(text: string): string;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  cyan(text: string): string;
}

export function shouldColor(
  stream: { isTTY: boolean },
  env: Readonly<Record<string, string | undefined>>,
): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== "") return force !== "0" && force !== "false";
  return stream.isTTY;
}

export function createPaint(enabled: boolean): Paint {
  const style = (open: number, close: number) => (text: string) =>
    enabled && text !== "" ? `\u001b[${open}m${text}\u001b[${close}m` : text;
  return {
    enabled,
    bold: style(1, 22),
    dim: style(2, 22),
    red: style(31, 39),
    green: style(32, 39),
    yellow: style(33, 39),
    cyan: style(36, 39),
  };
}

/** A status word in the color that reads right: ready/completed green, failed red, waiting yellow. */
export function paintStatus(paint: Paint, status: string): string {
  switch (status) {
    case "ready":
    case "completed":
    case "approved":
    case "approved_for_session":
    case "approved_always":
      return paint.green(status);
    case "failed":
    case "denied":
    case "abort":
    case "timed_out":
    case "invalid_arguments":
      return paint.red(status);
    case "starting":
    case "pending":
    case "skipped":
    case "cancelled":
      return paint.yellow(status);
    default:
      return status;
  }
}
