/**
 * Requests share one reply subscription per connection: each reply reaches the request it
 * answers, a reply that comes too late is dropped, and a closed connection fails requests at
 * once instead of at their timeout.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LEVEL, startBus, uniqueName } from "./support.js";

const Echo = z.object({ n: z.number(), delayMs: z.number() });

/** A service that answers `{n}` after `delayMs`. */
async function delayedEcho() {
  const server = await startBus();
  const { bus: client, lines } = await startBus();
  const subject = `${uniqueName()}.echo`;
  await server.bus.serve({ subject, name: "echo", request: Echo }, async ({ n, delayMs }) => {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    return { n };
  });
  return { client, subject, lines };
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

  it("logs the first reply that came after its caller gave up, naming the subject, and only counts the next", async () => {
    const { client, subject, lines } = await delayedEcho();
    for (const n of [5, 6]) {
      await expect(
        client.request(subject, { n, delayMs: 150 }, Answer, { timeoutMs: 20 }),
      ).rejects.toMatchObject({ code: "timeout" });
    }
    // A later request's reply comes after both late ones: they have been seen by then.
    await client.request(subject, { n: 7, delayMs: 300 }, Answer);
    expect(lines.filter((line) => /came after the caller had given up/.test(line.msg))).toEqual([
      expect.objectContaining({
        level: LEVEL.warn,
        subject,
        msg: `a reply on ${subject} came after the caller had given up (timed out) and was dropped; later ones are counted in toolbus.bus.replies.late`,
      }),
    ]);
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
