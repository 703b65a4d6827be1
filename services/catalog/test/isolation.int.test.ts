// A stdio server declared `isolation = "per_principal"` or `"per_session"`: each principal's (or
// session's) calls run in an instance of its own, so a server's state and the questions it asks
// during a call belong to one caller — where one shared process refuses an elicitation that
// does not say which of two running calls it is for. Instances are bounded and stopped when idle.
import type { Msg } from "@nats-io/transport-node";
import {
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogHarness, type Envelope, eventually, toolbusToml } from "./support/harness.js";

const script: TestServerScript = {
  tools: [
    { name: "echo" },
    { name: "ask", behavior: { kind: "elicit", message: "Pick a colour" } },
    { name: "hold", behavior: { kind: "delay", ms: 4_000 } },
  ],
};

let harness: CatalogHarness;
let byPrincipal: StdioTestServer;
let bySession: StdioTestServer;
let shared: StdioTestServer;

beforeAll(async () => {
  harness = await CatalogHarness.create("isolation");
  byPrincipal = await startTestServer({ transport: "stdio", script });
  bySession = await startTestServer({ transport: "stdio", script });
  shared = await startTestServer({ transport: "stdio", script });
  for (const server of [byPrincipal, bySession, shared]) harness.defer(() => server.dispose());
  const running = await harness.start(
    toolbusToml({
      servers: {
        mine: {
          command: byPrincipal.command,
          args: byPrincipal.args,
          isolation: "per_principal",
          max_instances: 2,
          instance_idle_timeout_sec: 1,
        },
        thread: { command: bySession.command, args: bySession.args, isolation: "per_session" },
        shared: { command: shared.command, args: shared.args },
      },
    }),
  );
  expect(await running.service.startup).toEqual({
    ready: ["mine", "shared", "thread"],
    failed: [],
    cancelled: [],
  });
}, 90_000);
afterAll(async () => {
  await harness?.close();
});

let calls = 0;
async function call(
  server: string,
  tool: string,
  who: { requestedBy?: string; threadId?: string },
): Promise<Envelope & { callId: string }> {
  const callId = `iso-${++calls}`;
  const preparedRevision = (await harness.entry(server))!.revision;
  const reply = await harness.request(
    harness.subjects.connectorCall(server),
    { callId, tool, preparedRevision, timeoutMs: 8_000, ...who },
    15_000,
  );
  return { ...reply, callId };
}

/** The process that ran `callId`, from the server's call log. */
async function pidOf(server: StdioTestServer, callId: string): Promise<number> {
  const line = (await server.calls()).find((one) => one._meta?.callId === callId);
  if (line?.pid === undefined) throw new Error(`no call ${callId} in the call log`);
  return line.pid;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Answers every elicitation of the given calls after `delayMs`, so that they are asked at once. */
function answerLater(callIds: string[], delayMs: number) {
  const subscriptions = callIds.map((callId) =>
    harness.nc.subscribe(harness.subjects.callRelayAnyServer(callId, "elicitation"), {
      callback: (_error, msg: Msg) => {
        setTimeout(
          () =>
            msg.respond(JSON.stringify({ ok: true, result: { action: "accept", content: { for: callId } } })),
          delayMs,
        );
      },
    }),
  );
  return {
    stop: () => {
      for (const sub of subscriptions) sub.unsubscribe();
    },
  };
}

describe("isolation per principal", () => {
  it("runs each principal's calls in an instance of its own, and one principal's calls in the same", async () => {
    // At once, so that no instance idles out in between on a slow machine.
    const [alice1, bob, alice2] = await Promise.all([
      call("mine", "echo", { requestedBy: "oauth:alice" }),
      call("mine", "echo", { requestedBy: "oauth:bob" }),
      call("mine", "echo", { requestedBy: "oauth:alice" }),
    ]);
    expect([alice1.ok, bob.ok, alice2.ok]).toEqual([true, true, true]);
    const [a1, b, a2] = await Promise.all([alice1, bob, alice2].map((c) => pidOf(byPrincipal, c.callId)));
    expect({ aliceTwiceInOne: a1 === a2, bobApart: b !== a1 }).toEqual({
      aliceTwiceInOne: true,
      bobApart: true,
    });
  });

  it("asks each caller its own question while two principals call at once (one shared process refuses)", async () => {
    const ask = async (server: string, principals: [string, string]) => {
      // The two calls below take the next two call ids.
      // Answered late, so that both questions are asked while both calls run.
      const answerer = answerLater([`iso-${calls + 1}`, `iso-${calls + 2}`], 1_500);
      await harness.nc.flush();
      try {
        const replies = await Promise.all(principals.map((p) => call(server, "ask", { requestedBy: p })));
        return replies.map((reply) => {
          const result = (
            reply as { result?: { result?: { content?: Array<{ text?: string }>; isError?: boolean } } }
          ).result?.result;
          return result?.isError ? "refused" : (result?.content?.[0]?.text ?? "none");
        });
      } finally {
        answerer.stop();
      }
    };
    const isolated = await ask("mine", ["oauth:carol", "oauth:dave"]);
    expect(isolated.map((text) => JSON.parse(text).action)).toEqual(["accept", "accept"]);
    // The control: the same calls to one shared process, where the questions do not say whose they are.
    expect(await ask("shared", ["oauth:carol", "oauth:dave"])).toContain("refused");
  });

  it("stops an instance after its idle timeout, and starts another at the principal's next call", async () => {
    const first = await call("mine", "echo", { requestedBy: "oauth:erin" });
    const pid = await pidOf(byPrincipal, first.callId);
    await eventually("the idle instance to stop", async () => (alive(pid) ? undefined : true), 10_000);
    const again = await call("mine", "echo", { requestedBy: "oauth:erin" });
    expect(again.ok).toBe(true);
    expect(await pidOf(byPrincipal, again.callId)).not.toBe(pid);
  });

  it("runs at most max_instances: a new principal is refused while all run calls, and served once one is idle", async () => {
    const holding = [
      call("mine", "hold", { requestedBy: "oauth:frank" }),
      call("mine", "hold", { requestedBy: "oauth:gina" }),
    ];
    await eventually("both holds running", async () =>
      (await byPrincipal.calls()).filter((line) => line.tool === "hold").length >= 2 ? true : undefined,
    );
    const refused = await call("mine", "echo", { requestedBy: "oauth:hal" });
    expect(refused).toMatchObject({
      ok: false,
      error: {
        code: "server_not_ready",
        message:
          "MCP server 'mine' runs one instance per principal, and all 2 are running calls; try again when one ends, or raise max_instances for 'mine'",
      },
    });
    expect((await Promise.all(holding)).map((reply) => reply.ok)).toEqual([true, true]);
    const served = await call("mine", "echo", { requestedBy: "oauth:hal" });
    expect(served.ok).toBe(true);
  });
});

describe("isolation per session", () => {
  it("runs each thread's calls in an instance of its own", async () => {
    const [t1, t2, t1again] = await Promise.all([
      call("thread", "echo", { threadId: "session-1" }),
      call("thread", "echo", { threadId: "session-2" }),
      call("thread", "echo", { threadId: "session-1" }),
    ]);
    const [p1, p2, p1again] = await Promise.all([t1, t2, t1again].map((c) => pidOf(bySession, c.callId)));
    expect({ sameThread: p1 === p1again, otherThread: p1 !== p2 }).toEqual({
      sameThread: true,
      otherThread: true,
    });
  });
});
