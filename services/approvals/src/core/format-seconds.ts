/** Durations in messages: `5 s`, `1.5 s`, `0.25 s`. */
export function formatSeconds(ms: number): string {
  return `${ms / 1000} s`;
}
