/**
 * Following `nextCursor` through a paginated MCP listing within the reference's limits
 * (docs/reference-behavior.md §2.2). The page fetch is passed in, so the rules stay testable.
 */
import { formatDuration } from "./startup-messages.js";

export interface PaginationLimits {
  maxPages: number;
  maxItems: number;
  maxCursorBytes: number;
  timeoutMs: number;
}

export const DEFAULT_PAGINATION_LIMITS: PaginationLimits = {
  maxPages: 100,
  maxItems: 2048,
  maxCursorBytes: 65_536,
  timeoutMs: 30_000,
};

export interface Page<T> {
  items: readonly T[];
  nextCursor?: string | undefined;
}

export class PaginationError extends Error {
  override readonly name = "PaginationError";
}

export interface PaginateOptions {
  method: string;
  limits?: Partial<PaginationLimits>;
  /** Legacy protocol `tools/list`: only the first page is read, whatever `nextCursor` says. */
  firstPageOnly?: boolean;
  /** Resolves after `ms`; injected so the rule has no timer of its own. */
  sleep: (ms: number) => Promise<void>;
}

/** Reads every page, or fails with the reference's message for the limit that was hit. */
export async function paginate<T>(
  fetchPage: (cursor: string | undefined) => Promise<Page<T>>,
  options: PaginateOptions,
): Promise<T[]> {
  const limits = { ...DEFAULT_PAGINATION_LIMITS, ...options.limits };
  const { method } = options;
  const timedOut = options
    .sleep(limits.timeoutMs)
    .then(() =>
      Promise.reject(
        new PaginationError(`${method} pagination timed out after ${formatDuration(limits.timeoutMs)}`),
      ),
    );
  timedOut.catch(() => {});
  const walk = async (): Promise<T[]> => {
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= limits.maxPages)
        throw new PaginationError(`${method} exceeded the pagination limit of ${limits.maxPages} pages`);
      const result = await fetchPage(cursor);
      items.push(...result.items);
      if (items.length > limits.maxItems) {
        throw new PaginationError(`${method} exceeded the catalog limit of ${limits.maxItems} items`);
      }
      const next = result.nextCursor;
      // An absent cursor ends the listing; an empty string is still followed.
      if (next === undefined || options.firstPageOnly) return items;
      if (new TextEncoder().encode(next).length > limits.maxCursorBytes) {
        throw new PaginationError(
          `${method} returned a pagination cursor exceeding ${limits.maxCursorBytes} bytes`,
        );
      }
      if (seen.has(next)) throw new PaginationError(`${method} returned a repeated pagination cursor`);
      seen.add(next);
      cursor = next;
    }
  };
  return Promise.race([walk(), timedOut]);
}
