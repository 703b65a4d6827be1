/**
 * A set of strings split by length and last code unit. Catalog naming keeps one entry per
 * tool, and filling one `Set` with ten thousand names measured twice as slow as filling many
 * small ones: the big table is copied each time it grows.
 */
export class StringSet {
  private readonly parts = new Map<number, Set<string>>();

  /** Adds `text`; false (and nothing changes) when it is already present. */
  add(text: string): boolean {
    const key = text.length * 0x10000 + (text.length === 0 ? 0 : text.charCodeAt(text.length - 1));
    let part = this.parts.get(key);
    if (part === undefined) {
      part = new Set();
      this.parts.set(key, part);
    }
    if (part.has(text)) return false;
    part.add(text);
    return true;
  }
}
