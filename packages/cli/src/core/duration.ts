/** Durations and times as the CLI prints them: `250ms`, `3.2s`, `1m05s`, `2h03m`, `12:03:04.005`. */

export function formatDuration(ms: number): string {
  const rounded = Math.max(0, Math.round(ms));
  if (rounded < 1000) return `${rounded}ms`;
  const tenths = Math.round(rounded / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)}s`;
  const seconds = Math.round(rounded / 1000);
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, "0")}s`;
  const minutes = Math.floor(seconds / 60);
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** `in 9m58s`, or `expired 3.0s ago`. */
export function formatExpiry(expiresAt: string, now: Date): string {
  const left = Date.parse(expiresAt) - now.getTime();
  if (Number.isNaN(left)) return expiresAt;
  return left > 0 ? `in ${formatDuration(left)}` : `expired ${formatDuration(-left)} ago`;
}

/** Local wall-clock time with milliseconds: `12:03:04.005`. */
export function formatClock(date: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}.${String(date.getMilliseconds()).padStart(3, "0")}`;
}
