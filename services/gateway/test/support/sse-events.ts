/** Reads a `text/event-stream` response (from fetch) one `{event, data}` at a time. */

export interface SseEvent {
  event: string;
  data: unknown;
}

export interface SseReader {
  /** The next event (comments skipped); rejects when the stream ends or after `timeoutMs`. */
  next(timeoutMs?: number): Promise<SseEvent>;
  /** Reads events until `match` accepts one; returns every event read, the matching one last. */
  until(match: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  /** Every comment line (`: …`) seen so far. */
  readonly comments: string[];
  cancel(): void;
}

export function readSse(response: Response): SseReader {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const queue: SseEvent[] = [];
  const comments: string[] = [];
  let buffer = "";

  const parse = (block: string) => {
    let event = "message";
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) comments.push(line.slice(1).trim());
      else if (line.startsWith("event: ")) event = line.slice(7);
      else if (line.startsWith("data: ")) data.push(line.slice(6));
    }
    if (data.length > 0) queue.push({ event, data: JSON.parse(data.join("\n")) });
  };

  const read = async (): Promise<void> => {
    const { done, value } = await reader.read();
    if (done) throw new Error("the SSE stream ended");
    buffer += decoder.decode(value, { stream: true });
    const blocks = buffer.split("\n\n");
    buffer = blocks.pop() ?? "";
    for (const block of blocks) parse(block);
  };

  const withTimeout = <T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> => {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  };

  const next = async (): Promise<SseEvent> => {
    for (;;) {
      const queued = queue.shift();
      if (queued) return queued;
      await read();
    }
  };

  return {
    next: (timeoutMs = 10_000) => withTimeout(next(), timeoutMs, "SSE event"),
    until: (match, timeoutMs = 15_000) =>
      withTimeout(
        (async () => {
          const seen: SseEvent[] = [];
          for (;;) {
            const event = await next();
            seen.push(event);
            if (match(event)) return seen;
          }
        })(),
        timeoutMs,
        "matching SSE event",
      ),
    comments,
    cancel: () => {
      reader.cancel().catch(() => undefined);
    },
  };
}
