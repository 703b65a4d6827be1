import { WireError } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { gate, LEVEL, startBus, uniqueName } from "./support.js";

const AddRequest = z.object({ callId: z.string().optional(), a: z.number(), b: z.number() });
const AddResult = z.object({ sum: z.number() });

async function adder(handler?: (req: z.infer<typeof AddRequest>) => Promise<{ sum: unknown }>) {
  const server = await startBus();
  const client = await startBus();
  const subject = `${uniqueName()}.add`;
  await server.bus.serve(
    { subject, name: "add", request: AddRequest },
    handler ?? (async ({ a, b }) => ({ sum: a + b })),
  );
  const raw = async (body: string) =>
    JSON.parse((await client.bus.nc.request(subject, body)).string()) as unknown;
  return { server, client, subject, raw };
}

describe("serve and request", () => {
  it("answers a typed request with the handler's result", async () => {
    const { client, subject } = await adder();
    await expect(client.bus.request(subject, { a: 1, b: 2 }, AddResult)).resolves.toEqual({ sum: 3 });
  });

  it("answers a body that is not JSON with bad_request instead of timing out", async () => {
    const { raw } = await adder();
    expect(await raw("{a: 1")).toEqual({
      ok: false,
      error: {
        code: "bad_request",
        message: expect.stringMatching(/^request body is not valid JSON \(.+\); send one JSON object$/),
        retryable: false,
      },
    });
  });

  it("answers a body the schema rejects with bad_request naming the field, logged at info", async () => {
    const { raw, server, subject } = await adder();
    expect(await raw('{"callId":"call-7","a":"1","b":2}')).toEqual({
      ok: false,
      error: {
        code: "bad_request",
        message: "a: Invalid input: expected number, received string",
        retryable: false,
      },
    });
    expect(server.lines.filter((line) => line.code === "bad_request")).toEqual([
      expect.objectContaining({
        level: LEVEL.info,
        subject,
        callId: "call-7",
        msg: "rejected request: a: Invalid input: expected number, received string",
      }),
    ]);
  });

  it("turns a bad_request reply into a WireError for the caller", async () => {
    const { client, subject } = await adder();
    const failure = client.bus.request(subject, { a: 1 }, AddResult);
    await expect(failure).rejects.toBeInstanceOf(WireError);
    await expect(failure).rejects.toMatchObject({
      code: "bad_request",
      message: "b: Invalid input: expected number, received undefined",
      retryable: false,
    });
  });

  const SECRET_CAUSE = "connection to the ledger database refused";
  it("answers internal when a handler throws, logs the cause at error, and keeps serving", async () => {
    let calls = 0;
    const { client, server, subject, raw } = await adder(async ({ a, b }) => {
      calls += 1;
      if (calls === 1) throw new Error(SECRET_CAUSE);
      return { sum: a + b };
    });
    const reply = (await raw('{"a":1,"b":1}')) as { error: { message: string } };
    expect(reply).toEqual({
      ok: false,
      error: {
        code: "internal",
        message: expect.stringMatching(
          /^the request failed because of an internal error in svc\w+ \(add\); its logs have the cause under errorId \w+$/,
        ),
        retryable: true,
      },
    });
    // The cause stays in the logs: a phrase no random service name or errorId can contain.
    expect(reply.error.message).not.toContain(SECRET_CAUSE);
    const errorId = reply.error.message.split(" ").at(-1);
    expect(server.lines.filter((line) => line.level === LEVEL.error)).toEqual([
      expect.objectContaining({
        subject,
        errorId,
        code: "internal",
        msg: "add handler threw",
        err: expect.objectContaining({ message: SECRET_CAUSE }),
      }),
    ]);
    await expect(client.bus.request(subject, { a: 2, b: 2 }, AddResult)).resolves.toEqual({ sum: 4 });
  });

  it("passes a handler's WireError through with its code, message and retryable flag", async () => {
    const { client, subject } = await adder(async () => {
      throw new WireError("stale_revision", "tool call rejected because the catalog changed", {
        retryable: true,
      });
    });
    await expect(client.bus.request(subject, { a: 1, b: 1 }, AddResult)).rejects.toMatchObject({
      name: "WireError",
      code: "stale_revision",
      message: "tool call rejected because the catalog changed",
      retryable: true,
    });
  });

  it("reports server_unavailable when nothing serves the subject", async () => {
    const { bus } = await startBus();
    const subject = `${uniqueName()}.nobody`;
    await expect(bus.request(subject, {}, AddResult)).rejects.toMatchObject({
      code: "server_unavailable",
      message: `no service answers on ${subject}; start the service that serves it (or check TOOLBUS_PREFIX)`,
      retryable: true,
    });
  });

  it("reports timeout when the reply does not come in time", async () => {
    const { client, subject } = await adder(async ({ a, b }) => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      return { sum: a + b };
    });
    await expect(
      client.bus.request(subject, { a: 1, b: 1 }, AddResult, { timeoutMs: 100 }),
    ).rejects.toMatchObject({
      code: "timeout",
      message: `no reply on ${subject} within 100 ms`,
      retryable: true,
    });
  });

  it("rejects a reply whose result breaks the contract, naming the field", async () => {
    const { client, subject } = await adder(async () => ({ sum: "three" }));
    await expect(client.bus.request(subject, { a: 1, b: 2 }, AddResult)).rejects.toMatchObject({
      code: "internal",
      message: `the reply on ${subject} does not match the contract (result.sum: Invalid input: expected number, received string); the service and its caller disagree on the schema`,
      retryable: false,
    });
  });

  it("gives the handler a logger that names the subject and the call", async () => {
    const { client, server, subject } = await adder(async ({ a, b }) => ({ sum: a + b }));
    const subjectEcho = `${subject}.ctx`;
    await server.bus.serve({ subject: subjectEcho, name: "ctx", request: AddRequest }, async (req, ctx) => {
      ctx.logger.info("handling");
      return { sum: req.a, subject: ctx.subject, callId: ctx.callId, aborted: ctx.signal.aborted };
    });
    await expect(
      client.bus.request(
        subjectEcho,
        { callId: "call-9", a: 5, b: 0 },
        z.object({ sum: z.number(), subject: z.string(), callId: z.string(), aborted: z.boolean() }),
      ),
    ).resolves.toEqual({ sum: 5, subject: subjectEcho, callId: "call-9", aborted: false });
    expect(server.lines.filter((line) => line.msg === "handling")).toEqual([
      expect.objectContaining({ level: LEVEL.info, subject: subjectEcho, callId: "call-9" }),
    ]);
  });

  it("shares requests between replicas in the service's queue group, each answered once", async () => {
    const name = uniqueName("svc");
    const subject = `${uniqueName()}.who`;
    const replicas = await Promise.all([startBus(name), startBus(name)]);
    const handled: string[] = [];
    for (const [index, replica] of replicas.entries()) {
      await replica.bus.serve({ subject, name: "who", request: z.object({}) }, async () => {
        handled.push(`replica-${index}`);
        return { index };
      });
    }
    const { bus } = await startBus();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => bus.request(subject, {}, z.object({ index: z.number() }))),
    );
    expect(answers).toHaveLength(20);
    expect(handled).toHaveLength(20);
    expect(new Set(handled)).toEqual(new Set(["replica-0", "replica-1"]));
  });

  it("answers a reply too large for the bus with payload_too_large", async () => {
    const { client, subject } = await adder(async () => ({ sum: 1, padding: "x".repeat(2 * 1024 * 1024) }));
    await expect(client.bus.request(subject, { a: 1, b: 1 }, AddResult)).rejects.toMatchObject({
      code: "payload_too_large",
      message: expect.stringMatching(/^the reply of add is \d+ bytes, over the bus limit of \d+ bytes/),
      retryable: false,
    });
  });
});

describe("micro service registration", () => {
  it("lists the endpoint in $SRV.INFO, answers $SRV.PING and counts requests in $SRV.STATS", async () => {
    const { server, client, subject } = await adder();
    const name = server.bus.service.name;
    await client.bus.request(subject, { a: 1, b: 1 }, AddResult);
    await client.bus.request(subject, { a: 1 }, AddResult).catch(() => undefined);
    const ask = async (control: string) =>
      JSON.parse((await client.bus.nc.request(control, "", { timeout: 2_000 })).string()) as { id: string };

    const ping = await ask(`$SRV.PING.${name}`);
    expect(ping).toEqual({
      type: "io.nats.micro.v1.ping_response",
      name,
      id: expect.any(String),
      version: "1.0.0",
      metadata: {},
    });
    expect(await ask(`$SRV.INFO.${name}`)).toEqual({
      type: "io.nats.micro.v1.info_response",
      name,
      id: ping.id,
      version: "1.0.0",
      description: "",
      metadata: {},
      endpoints: [{ name: "add", subject, queue_group: name, metadata: {} }],
    });
    expect(await ask(`$SRV.STATS.${name}.${ping.id}`)).toEqual({
      type: "io.nats.micro.v1.stats_response",
      name,
      id: ping.id,
      version: "1.0.0",
      started: expect.any(String),
      metadata: {},
      endpoints: [
        {
          name: "add",
          subject,
          queue_group: name,
          num_requests: 2,
          num_errors: 1,
          last_error: "bad_request: b: Invalid input: expected number, received undefined",
          processing_time: expect.any(Number),
          average_processing_time: expect.any(Number),
        },
      ],
    });
  });

  it("answers the unnamed $SRV.PING that discovers every service", async () => {
    const { server, client } = await adder();
    const names: string[] = [];
    // Every service on the shared NATS answers, other suites' too: a loaded server can take a
    // while to reach ours, so the wait is long and ends as soon as ours has answered.
    const replies = await client.bus.nc.requestMany("$SRV.PING", "", { maxWait: 15_000 });
    for await (const reply of replies) {
      names.push((JSON.parse(reply.string()) as { name: string }).name);
      if (names.includes(server.bus.service.name)) break;
    }
    expect(names).toContain(server.bus.service.name);
  });

  it("refuses an endpoint name the micro protocol does not allow", async () => {
    const { bus } = await startBus();
    await expect(
      bus.serve({ subject: `${uniqueName()}.x`, name: "get.all", request: z.object({}) }, async () => ({})),
    ).rejects.toThrow('endpoint name "get.all" is not valid: use letters, digits, "-" and "_" only');
  });
});

describe("the handlers' signal", () => {
  it("takes a listener from each of 32 calls in flight without node warning of a leak", async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on("warning", onWarning);
    try {
      const server = await startBus();
      const client = await startBus();
      const subject = `${uniqueName()}.held`;
      const release = gate();
      let listening = 0;
      await server.bus.serve({ subject, name: "held", request: z.object({}) }, async (_req, ctx) => {
        // As a connector call does: stop the call when the service stops, until it settles.
        const stop = () => undefined;
        ctx.signal.addEventListener("abort", stop, { once: true });
        listening++;
        await release.promise;
        ctx.signal.removeEventListener("abort", stop);
        return {};
      });
      const calls = Array.from({ length: 32 }, () => client.bus.request(subject, {}, z.object({})));
      while (listening < 32) await new Promise((resolve) => setTimeout(resolve, 10));
      release.open();
      await Promise.all(calls);
      // Node emits the warning on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect({ listening, warnings }).toEqual({ listening: 32, warnings: [] });
    } finally {
      process.off("warning", onWarning);
    }
  });
});
