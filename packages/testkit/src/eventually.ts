/** Waiting in tests for something real processes do (a server starts, an event arrives). */

const POLL_MS = 20;

/**
 * Polls `check` until it returns a value other than undefined, and resolves with it; fails after
 * `timeoutMs` with `what` and the last error `check` threw, so a timeout says what never came.
 */
export async function eventually<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${(lastError as Error).message}` : ""}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
