/**
 * A hostile MCP server's big results are bounded and never contagious (issue 22, item 5): `pnpm
 * start` in a child process, on a nats-server that enforces the generated identities, serving a
 * stdio server that answers eight calls at once with 15 MiB each and one with 2 MiB, while small
 * calls go on beside them (to a calm server of their own: the hostile one answers in turn).
 * Every small call is answered, correctly; the 2 MiB result arrives whole; each 15 MiB one
 * arrives whole — the process stores and reads at most its budget of large replies at once, and
 * a reply waits its turn for room: so all eight did, every run on the 2-core development machine
 * — or, where its turn does not come within the wait (30 s), is refused with payload_too_large
 * naming that budget; the test accepts either and nothing else. The all-in-one's peak RSS
 * (VmHWM) stays under 600 MiB (436–471 MiB measured), and no NATS connection is renewed.
 */
import { readFileSync } from "node:fs";
import { type StdioTestServer, startTestServer } from "@toolbus/testkit/mcp-test-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EnforcedToolbus, startEnforcedToolbus, stdioServerLines } from "./support/enforced-toolbus.js";

const MIB = 1024 * 1024;
const HUGE_CALLS = 8;
const HUGE_BYTES = 15 * MIB;
const MEDIUM_BYTES = 2 * MIB;
/** Small calls sent one after another while the big ones run; bounded in count and in time. */
const SMALL_CALLS_AT_MOST = 300;
const RSS_LIMIT_BYTES = 600 * MIB;

interface CallReply {
  status?: string;
  error?: string | { code: string; message: string };
  result?: { content: Array<{ text: string }> };
}

/** What one call came to, as a user reads it: the text it got, or the refusal's words. */
interface Outcome {
  httpStatus: number;
  reply: CallReply;
}

/** Kibibytes of a `/proc/<pid>/status` field (`VmRSS`, `VmHWM`), in bytes. */
function memoryOf(pid: number, field: "VmRSS" | "VmHWM"): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1];
  if (kib === undefined) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(kib) * 1024;
}

/** The text of a completed call: all `x`, of the length asked for. */
function isWhole(outcome: Outcome, bytes: number): boolean {
  const text = outcome.reply.result?.content[0]?.text;
  return (
    outcome.httpStatus === 200 &&
    outcome.reply.status === "completed" &&
    text?.length === bytes &&
    /^x*$/.test(text)
  );
}

/** A refusal, in the call's reply or as the HTTP error, that names the budget for large replies. */
function namesTheBudget(outcome: Outcome): boolean {
  const { error } = outcome.reply;
  const words = typeof error === "string" ? error : (error?.message ?? "");
  return (
    /payload_too_large|too large/.test(JSON.stringify(outcome.reply)) &&
    words.includes("[bus] large_replies_in_flight_bytes")
  );
}

describe("a hostile server's big results, beside small calls", () => {
  let running: EnforcedToolbus;
  let hostile: StdioTestServer;
  let calm: StdioTestServer;
  let toolbus: EnforcedToolbus["toolbus"];
  let url: string;

  beforeAll(async () => {
    hostile = await startTestServer({
      transport: "stdio",
      script: {
        tools: [
          { name: "huge", behavior: { kind: "huge", bytes: HUGE_BYTES } },
          { name: "medium", behavior: { kind: "huge", bytes: MEDIUM_BYTES } },
        ],
      },
    });
    // The small calls go to a server of their own: the hostile one answers its calls in turn.
    calm = await startTestServer({
      transport: "stdio",
      script: { tools: [{ name: "echo", behavior: { kind: "echo" } }] },
    });
    const approve = 'default_tools_approval_mode = "approve"';
    running = await startEnforcedToolbus({
      label: "hostile_large",
      servers: ["hostile", "calm"],
      tables: () => ({
        hostile: stdioServerLines(hostile.command, hostile.args, [approve]),
        calm: stdioServerLines(calm.command, calm.args, [approve]),
      }),
    });
    toolbus = running.toolbus;
    expect(toolbus.child.exitCode).toBeNull();
    url = running.url;
  });

  afterAll(async () => {
    await running?.stop();
    await hostile?.dispose();
    await calm?.dispose();
  });

  const call = async (callId: string, tool: string, args: object, server = "hostile"): Promise<Outcome> => {
    const response = await fetch(`${url}/v1/calls`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ callId, tool: `mcp__${server}__${tool}`, arguments: JSON.stringify(args) }),
      signal: AbortSignal.timeout(180_000),
    });
    return { httpStatus: response.status, reply: (await response.json()) as CallReply };
  };

  it("answers every other call, keeps the all-in-one under 600 MiB and renews no connection", async () => {
    const pid = toolbus.child.pid!;
    let peakSampled = memoryOf(pid, "VmRSS");
    const sampler = setInterval(() => {
      // A process that died meanwhile is caught by the assertions below, not here.
      if (toolbus.child.exitCode === null) peakSampled = Math.max(peakSampled, memoryOf(pid, "VmRSS"));
    }, 50);
    try {
      const started = memoryOf(pid, "VmRSS");
      const huge = Array.from({ length: HUGE_CALLS }, (_, i) => call(`hostile-huge-${i}`, "huge", {}));
      const medium = call("hostile-medium", "medium", {});
      let bigDone = false;
      void Promise.allSettled([...huge, medium]).then(() => {
        bigDone = true;
      });
      const small: Array<{ sent: string; outcome: Outcome }> = [];
      for (let i = 0; i < SMALL_CALLS_AT_MOST && !bigDone; i++) {
        const sent = `small ${i}`;
        small.push({ sent, outcome: await call(`hostile-small-${i}`, "echo", { sent }, "calm") });
      }
      const hugeOutcomes = await Promise.all(huge);
      const mediumOutcome = await medium;
      const peak = memoryOf(pid, "VmHWM");
      const answered = hugeOutcomes.filter((outcome) => isWhole(outcome, HUGE_BYTES)).length;
      const refused = hugeOutcomes.filter(namesTheBudget).length;
      console.info(
        `hostile large results: RSS before ${Math.round(started / MIB)} MiB, peak sampled ${Math.round(peakSampled / MIB)} MiB, ` +
          `VmHWM ${Math.round(peak / MIB)} MiB; 15 MiB results answered whole: ${answered}, refused naming the budget: ${refused}; ` +
          `small calls answered meanwhile: ${small.length}`,
      );
      expect({
        smallAnsweredCorrectly: small.every(
          ({ sent, outcome }) =>
            outcome.httpStatus === 200 &&
            outcome.reply.status === "completed" &&
            outcome.reply.result?.content[0]?.text === JSON.stringify({ sent }),
        ),
        someSmallCallsRanBeside: small.length > 0,
        mediumWhole: isWhole(mediumOutcome, MEDIUM_BYTES),
        // Each whole, or refused naming the budget: nothing else, nothing unanswered.
        hugeAccountedFor: answered + refused,
        peakUnderLimit: peak < RSS_LIMIT_BYTES,
        renewals: toolbus
          .output()
          .split("\n")
          .filter((line) => /renewing the (NATS )?connection/i.test(line)),
      }).toEqual({
        smallAnsweredCorrectly: true,
        someSmallCallsRanBeside: true,
        mediumWhole: true,
        hugeAccountedFor: HUGE_CALLS,
        peakUnderLimit: true,
        renewals: [],
      });
    } finally {
      clearInterval(sampler);
    }
  }, 240_000);
});
