/**
 * Requests share one reply subscription per connection: each reply reaches the request it
 * answers, a reply that comes too late is dropped, and a closed connection fails requests at
 * once instead of at their timeout.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBus, uniqueName } from "./support.js";

const Echo = z.object({ n: z.number(), delayMs: z.number() });

/** A service that answers `{n}` after `delayMs`. */
async function delayedEcho() {
  const server = await startBus();
  const client = await startBus();
  const subject = `${uniqueName()}.echo`;
  await server.bus.serve({ subject, name: "echo", request: Echo }, async ({ n, delayMs }) => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return { n };
  });
  return { client: client.bus, subject };
}

const Answer = z.object({ n: z.number() });

describe("requests over the reply inbox", () => {
  it("gives each of many concurrent requests its own reply, whatever order the replies come in", async () => {
    const { client, subject } = await delayedEcho();
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, n) => client.request(subject, { n, delayMs: (n * 7) % 23 }, Answer)),
    );
    expect(answers).toEqual(Array.from({ length: 200 }, (_, n) => ({ n })));
  });

  it("drops a reply that comes after its request timed out; the next request gets its own", async () => {
    const { client, subject } = await delayedEcho();
    await expect(
      client.request(subject, { n: 1, delayMs: 300 }, Answer, { timeoutMs: 50 }),
    ).rejects.toMatchObject({ code: "timeout" });
    const next = client.request(subject, { n: 2, delayMs: 400 }, Answer);
    await expect(next).resolves.toEqual({ n: 2 });
  });

  it("fails a request waiting for its reply as soon as the connection closes, not at its timeout", async () => {
    const { client, subject } = await delayedEcho();
    // The reply can never come and the timeout outlasts the test: only the close can settle it.
    const waiting = client.request(subject, { n: 3, delayMs: 5_000 }, Answer, { timeoutMs: 600_000 });
    await client.nc.close();
    await expect(waiting).rejects.toMatchObject({
      code: "transport_error",
      message: `request on ${subject} failed: closed connection`,
    });
  });

  it("fails a request on a closed connection with transport_error", async () => {
    const { client, subject } = await delayedEcho();
    await client.nc.close();
    await expect(client.request(subject, { n: 4, delayMs: 0 }, Answer)).rejects.toMatchObject({
      code: "transport_error",
      message: `request on ${subject} failed: closed connection`,
    });
  });
});
