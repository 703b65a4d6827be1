/** The one structural test the core needs on untrusted JSON: is it a plain object. */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
