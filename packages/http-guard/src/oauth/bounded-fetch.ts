/**
 * Requests to the identity provider, bounded: a deadline, a body read no further than a size
 * cap (a document larger than that is refused, not buffered), and no redirects followed. An
 * issuer that hangs or sends gigabytes costs the gateway a timeout, never its memory.
 */

export interface FetchBounds {
  timeoutMs: number;
  maxBytes: number;
}

/** The identity provider did not answer usefully: not the client's fault. */
export class IssuerUnavailable extends Error {
  override readonly name = "IssuerUnavailable";
}

/** Fetches `url` and reads its body whole within the bounds; the answer is a fresh `Response` of those bytes. */
export async function boundedFetch(
  url: string | URL,
  init: RequestInit,
  bounds: FetchBounds,
  what: string,
): Promise<Response> {
  // The caller's signal (jose's own deadline for the key set) counts as the deadline too.
  const timeout = AbortSignal.timeout(bounds.timeoutMs);
  const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal, redirect: "manual" });
  } catch (error) {
    throw new IssuerUnavailable(
      signal.aborted
        ? `${what} did not answer within ${bounds.timeoutMs} ms`
        : `${what} could not be reached (${causeOf(error)})`,
    );
  }
  try {
    const body = await readCapped(response, bounds.maxBytes, what);
    return new Response(body, { status: response.status, headers: response.headers });
  } catch (error) {
    if (error instanceof IssuerUnavailable) throw error;
    throw new IssuerUnavailable(
      signal.aborted
        ? `${what} did not send its answer within ${bounds.timeoutMs} ms`
        : `${what} broke off its answer (${causeOf(error)})`,
    );
  }
}

/** A JSON object from `url`, or `IssuerUnavailable` saying what was wrong with the answer. */
export async function fetchJsonObject(
  url: string | URL,
  init: RequestInit,
  bounds: FetchBounds,
  what: string,
): Promise<Record<string, unknown>> {
  const response = await boundedFetch(
    url,
    { ...init, headers: { accept: "application/json", ...init.headers } },
    bounds,
    what,
  );
  if (response.status !== 200) throw new IssuerUnavailable(`${what} answered HTTP ${response.status}`);
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new IssuerUnavailable(`${what} did not answer JSON`);
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new IssuerUnavailable(`${what} did not answer a JSON object`);
  }
  return body as Record<string, unknown>;
}

async function readCapped(response: Response, maxBytes: number, what: string): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new IssuerUnavailable(`${what} sent ${declared} bytes, more than the ${maxBytes} it may`);
  }
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new IssuerUnavailable(`${what} sent more than the ${maxBytes} bytes it may`);
    }
    chunks.push(value);
  }
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}
