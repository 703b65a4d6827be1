import { describe, expect, it } from "vitest";
import { z } from "zod";
import { onShutdown } from "../src/shutdown.js";
import { gate, LEVEL, startBus, uniqueName } from "./support.js";

async function slowService() {
  const server = await startBus();
  const client = await startBus();
  const subject = `${uniqueName()}.slow`;
  const release = gate();
  const started = gate();
  const order: string[] = [];
  await server.bus.serve({ subject, name: "slow", request: z.object({}) }, async () => {
    started.open();
    await release.promise;
    order.push("handler finished");
    return { done: true };
  });
  return { server, client, subject, release, started, order };
}

describe("onShutdown", () => {
  it("finishes an in-flight request, runs the closers, then closes NATS and exits 0", async () => {
    const { server, client, subject, release, started, order } = await slowService();
    const exits: number[] = [];
    const handle = onShutdown(server.bus, {
      logger: server.bus.logger,
      closers: [async () => void order.push(`closer ran, nats closed: ${server.bus.nc.isClosed()}`)],
      signals: ["SIGUSR2"],
      exit: (code) => exits.push(code),
    });
    const reply = client.bus.request(subject, {}, z.object({ done: z.boolean() }));
    await started.promise;
    process.emit("SIGUSR2", "SIGUSR2");
    setTimeout(release.open, 200);
    await expect(reply).resolves.toEqual({ done: true });
    await handle.shutdown("already running");
    expect({ order, exits, closed: server.bus.nc.isClosed() }).toEqual({
      order: ["handler finished", "closer ran, nats closed: false"],
      exits: [0],
      closed: true,
    });
    await expect(client.bus.request(subject, {}, z.unknown())).rejects.toMatchObject({
      code: "server_unavailable",
    });
  });

  it("drains the service it is given instead of the bus alone, and stops it before the closers", async () => {
    const { server, client, subject, release, started, order } = await slowService();
    const exits: number[] = [];
    const handle = onShutdown(server.bus, {
      logger: server.bus.logger,
      service: {
        drain: async (options) => {
          order.push(`service drain, grace ${options?.graceMs}`);
          await server.bus.drain(options);
        },
        stop: async () => void order.push("service stopped"),
      },
      graceMs: 5_000,
      closers: [async () => void order.push("closer ran")],
      signals: [],
      exit: (code) => exits.push(code),
    });
    const reply = client.bus.request(subject, {}, z.object({ done: z.boolean() }));
    await started.promise;
    const stopping = handle.shutdown("test");
    setTimeout(release.open, 200);
    await expect(reply).resolves.toEqual({ done: true });
    await stopping;
    expect({ order, exits, closed: server.bus.nc.isClosed() }).toEqual({
      order: ["service drain, grace 5000", "handler finished", "service stopped", "closer ran"],
      exits: [0],
      closed: true,
    });
  });

  it("exits at once on a second signal, not on the first delivered twice", async () => {
    const { server, client, subject, release, started } = await slowService();
    const exits: number[] = [];
    let now = 0;
    const handle = onShutdown(server.bus, {
      logger: server.bus.logger,
      signals: ["SIGUSR2"],
      exit: (code) => exits.push(code),
      now: () => now,
    });
    const reply = client.bus.request(subject, {}, z.unknown());
    await started.promise;
    process.emit("SIGUSR2", "SIGUSR2");
    // The terminal's Ctrl-C, then the same one forwarded by a parent (pnpm exec).
    now = 40;
    process.emit("SIGUSR2", "SIGUSR2");
    expect(exits).toEqual([]);
    now = 1500;
    process.emit("SIGUSR2", "SIGUSR2");
    expect(exits).toEqual([1]);
    // In a real process the first exit ends it; here the first shutdown runs on to its own end.
    release.open();
    await reply;
    await handle.shutdown("already running");
    expect(exits).toEqual([1, 0]);
  });

  it("aborts the handler's signal when it outlives the grace period, and still answers", async () => {
    const server = await startBus();
    const client = await startBus();
    const subject = `${uniqueName()}.stuck`;
    await server.bus.serve({ subject, name: "stuck", request: z.object({}) }, async (_req, ctx) => {
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      return { aborted: ctx.signal.aborted };
    });
    const reply = client.bus.request(subject, {}, z.object({ aborted: z.boolean() }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const exits: number[] = [];
    const handle = onShutdown(server.bus, {
      logger: server.bus.logger,
      graceMs: 100,
      signals: [],
      exit: (code) => exits.push(code),
    });
    await handle.shutdown("test");
    await expect(reply).resolves.toEqual({ aborted: true });
    expect(exits).toEqual([0]);
    expect(server.lines.filter((line) => line.level === LEVEL.warn).map((line) => line.msg)).toContain(
      "1 request(s) still running after 100 ms; aborting them",
    );
  });
});
