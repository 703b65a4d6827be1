/**
 * A callId runs once across replicas and survives the process running it (issue 16): the
 * dispatchers share a call ledger, the catalog replicas an executions ledger. Real processes,
 * real SIGKILLs; the test server's call log says how often the tool really ran.
 */
import { randomUUID } from "node:crypto";
import { connectBus, createLogger, watchedRecord, watchedRequest } from "@toolbus/bus";
import { internalSubjects, type ToolCallReply, ToolCallReplySchema } from "@toolbus/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DispatchHarness, eventually } from "./support/harness.js";
import { type ServiceProcess, startServiceProcess } from "./support/processes.js";

let h: DispatchHarness;
const extra: ServiceProcess[] = [];

beforeAll(async () => {
  h = await DispatchHarness.start({
    label: "run_once",
    dispatcherProcess: true,
    // Longer than a replica takes to start, so the kill always lands while the tool runs.
    script: {
      tools: [
        { name: "echo" },
        { name: "slow", behavior: { kind: "delay", ms: 15_000 } },
        { name: "stuck", behavior: { kind: "hang" } },
      ],
    },
  });
});
afterAll(async () => {
  for (const process of extra) await process.stop();
  await h?.close();
});

const executions = async (callId: string) =>
  (await h.scripted!.calls()).filter((call) => call._meta?.callId === callId).length;

/** The request a caller (the gateway) sends, straight on the bus: any dispatcher may take it. */
async function send(callId: string, tool: string, timeoutMs = 30_000): Promise<ToolCallReply> {
  const reply = await h.nc.request(
    h.subjects.dispatchCall,
    JSON.stringify({ callId, tool, arguments: '{"n":1}' }),
    { timeout: timeoutMs },
  );
  const envelope = reply.json<{ ok: boolean; result: ToolCallReply; error?: unknown }>();
  if (!envelope.ok) throw new Error(`not ok: ${JSON.stringify(envelope.error)}`);
  return envelope.result;
}

function startDispatcher(): Promise<ServiceProcess> {
  return startServiceProcess({
    service: "dispatcher",
    prefix: h.prefix,
    natsUrl: h.natsUrl,
    configPath: h.configPath,
    readyMessage: "dispatcher ready",
  });
}

describe("a callId across dispatcher replicas", () => {
  it("gets the first reply from another replica, and the tool ran once", async () => {
    const callId = `once-${randomUUID()}`;
    const first = await send(callId, "mcp__scripted__echo");
    // Only a new replica serves from here on: it never saw the callId.
    const second = await startDispatcher();
    extra.push(second);
    await h.dispatcherProcess!.stop();
    const again = await send(callId, "mcp__scripted__echo");
    expect({ again, executions: await executions(callId) }).toEqual({ again: first, executions: 1 });
    h.dispatcherProcess = second;
  });

  it("is taken over when the dispatcher running it is killed: the caller gets its reply, the tool ran once", async () => {
    const callId = `takeover-${randomUUID()}`;
    const victim = h.dispatcherProcess!;
    // The caller as the gateway is: it watches the call's record and sends again if the owner dies.
    const caller = await connectBus({
      natsUrl: h.natsUrl,
      service: { name: "caller", version: "0.0.1" },
      logger: createLogger({ service: "caller", version: "0.0.1", level: "silent" }),
    });
    const calls = await caller
      .kvm()
      .open(internalSubjects(h.prefix).kv.calls, { allow_direct: true } as never);
    const call = watchedRequest(
      caller,
      h.subjects.dispatchCall,
      { callId, tool: "mcp__scripted__slow", arguments: '{"n":1}' },
      ToolCallReplySchema,
      { timeoutMs: 60_000, record: watchedRecord(calls, callId) },
    );
    await eventually("the tool to start on the server", async () =>
      (await executions(callId)) === 1 ? true : undefined,
    );
    const survivor = await startDispatcher();
    extra.push(survivor);
    victim.child.kill("SIGKILL");
    h.dispatcherProcess = survivor;
    const reply = await call.finally(() => caller.close());
    expect({ status: reply.status, executions: await executions(callId) }).toEqual({
      status: "completed",
      executions: 1,
    });
  }, 90_000);
});

describe("a catalog replica killed in the middle of a call", () => {
  it("is answered in seconds, saying the tool may or may not have run, and never run again", async () => {
    const callId = `orphan-${randomUUID()}`;
    const victim = h.catalogProcess;
    // Answered within this request's 60 s, not after the tool's 5-minute default timeout.
    const inFlight = send(callId, "mcp__scripted__stuck", 60_000);
    await eventually("the tool to start on the server", async () =>
      (await executions(callId)) === 1 ? true : undefined,
    );
    // A second replica of the same server, then the first dies with the call in flight.
    const replacement = await startServiceProcess({
      service: "catalog",
      prefix: h.prefix,
      natsUrl: h.natsUrl,
      configPath: h.configPath,
      readyMessage: "catalog ready",
    });
    extra.push(replacement);
    victim.child.kill("SIGKILL");
    h.catalogProcess = replacement;
    const reply = await inFlight;
    const retry = await send(callId, "mcp__scripted__stuck", 60_000);
    expect({
      status: reply.status,
      error: reply.error,
      retry: retry.error,
      executions: await executions(callId),
    }).toEqual({
      status: "failed",
      error: expect.stringContaining(
        "stopped before it answered: the tool may or may not have run, and toolbus does not run it again",
      ),
      retry: reply.error,
      executions: 1,
    });
  }, 90_000);
});

describe("a call while no catalog replica serves its server", () => {
  it("is offered again until a replica is back, then runs once (the connector said it did not run it)", async () => {
    const callId = `absent-${randomUUID()}`;
    // Every replica of the server gone: the connector subject has no responders.
    await h.catalogProcess.stop();
    const inFlight = send(callId, "mcp__scripted__echo", 60_000);
    // A replica comes back while the dispatcher still holds the call.
    h.catalogProcess = await startServiceProcess({
      service: "catalog",
      prefix: h.prefix,
      natsUrl: h.natsUrl,
      configPath: h.configPath,
      readyMessage: "catalog ready",
    });
    extra.push(h.catalogProcess);
    const reply = await inFlight;
    expect({ status: reply.status, executions: await executions(callId) }).toEqual({
      status: "completed",
      executions: 1,
    });
  }, 90_000);
});
