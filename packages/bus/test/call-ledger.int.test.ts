/**
 * The call ledger when JetStream falters (issue 16: a NATS node lost under load): an answer lost
 * on the way back must not leave a call waiting for ever. A record this instance wrote but never
 * heard about is claimed again; an outcome JetStream does not take yet is kept, tried again, and
 * answered from memory meanwhile. Real KV buckets on the test NATS; where JetStream must fail,
 * the bucket's writes are refused as a lost node refuses them (a seam on the KV handle).
 */
import type { KV } from "@nats-io/kv";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Bus } from "../src/bus.js";
import { CallLedger, watchedRecord } from "../src/call-ledger.js";
import { startBus, uniqueName } from "./support.js";

const buckets: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.allSettled(buckets.splice(0).map((destroy) => destroy()));
});

/** A bucket of this test's own (in a deployment the provisioner makes the ledger's bucket). */
async function scratchBucket(bus: Bus): Promise<KV> {
  const kv = await bus.kvm().create(uniqueName("ledger"), { history: 1 });
  buckets.push(() => kv.destroy());
  return kv;
}

async function ledgerOn(kv?: KV, keyPrefix?: string) {
  const { bus } = await startBus();
  // A service answers `$SRV.PING.<instance>` once it serves an endpoint: this one is alive.
  await bus.serve({ subject: `${uniqueName()}.noop`, name: "noop", request: z.object({}) }, async () => ({}));
  const bucket = kv ?? (await scratchBucket(bus));
  const ledger = new CallLedger<string>({
    bus,
    kv: bucket,
    onOrphan: "take over",
    pollMs: 20,
    ...(keyPrefix ? { keyPrefix } : {}),
  });
  return { bus, kv: bucket, ledger };
}

/** The bucket's puts refused `times` times, as JetStream refuses them while its leader is gone. */
function refusingPuts(kv: KV, times: number): KV & { refused: number } {
  let refused = 0;
  const refuse = () => {
    refused++;
    return Promise.reject(new Error("jetstream is not enabled: no responders"));
  };
  return new Proxy(kv, {
    get(target, property, receiver) {
      if (property === "refused") return refused;
      if (property === "put" && refused < times) return refuse;
      const value = Reflect.get(target, property, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as KV & { refused: number };
}

describe("the call ledger when JetStream falters", () => {
  it("claims again a running record of its own it never heard about (a create whose answer was lost)", async () => {
    const { bus, kv, ledger } = await ledgerOn();
    // What a create that timed out may have stored: this instance as the owner, nothing running here.
    await kv.create("call-1", JSON.stringify({ state: "running", identity: "i", owner: bus.instance }));
    expect(await ledger.claim("call-1", "i")).toEqual({ kind: "claimed" });
    // Now it does run here: a repeat waits for it, as for any running call.
    expect(await ledger.claim("call-1", "i")).toEqual({ kind: "running", owner: bus.instance });
  });

  it("lets another replica waiting on such a record take the call over once its owner drops it", async () => {
    const owner = await ledgerOn();
    const other = await ledgerOn(owner.kv);
    await owner.kv.create(
      "call-2",
      JSON.stringify({ state: "running", identity: "i", owner: owner.bus.instance }),
    );
    expect(await other.ledger.claim("call-2", "i")).toEqual({ kind: "running", owner: owner.bus.instance });
    const waited = other.ledger.await("call-2", "i", 10_000);
    // The owner is alive, so the waiter waits; the owner's release drops what is not its to keep.
    await owner.ledger.release("call-2");
    expect(await waited).toEqual({ kind: "taken_over" });
    // And a late release by the first owner does not delete the claim the other replica holds now.
    await owner.ledger.release("call-2");
    expect(await other.ledger.read("call-2", "i")).toEqual({ kind: "running", owner: other.bus.instance });
  });

  it("records an outcome JetStream refused at first, answering a repeat from memory meanwhile", async () => {
    const { bus, kv, ledger } = await ledgerOn();
    const refusing = refusingPuts(kv, 2);
    const slowLedger = new CallLedger<string>({ bus, kv: refusing, onOrphan: "take over", pollMs: 20 });
    expect(await slowLedger.claim("call-4", "i")).toEqual({ kind: "claimed" });
    const finished = slowLedger.finish("call-4", "i", "the reply");
    expect(await slowLedger.claim("call-4", "i")).toEqual({ kind: "done", outcome: "the reply" });
    await finished;
    expect(refusing.refused).toBe(2);
    expect(await ledger.read("call-4", "i")).toEqual({ kind: "done", outcome: "the reply" });
  });
});

describe("an outcome too large for one record", () => {
  const stored = {
    prefix: "toolbus",
    recipient: "gateway",
    id: "R1",
    chunks: 16,
    bytes: 15 * 1024 * 1024,
    sha256: "b".repeat(64),
  };

  it("is kept as the stored reply that carried it: another replica answers a repeat with that reply", async () => {
    const owner = await ledgerOn();
    const other = await ledgerOn(owner.kv);
    expect(await owner.ledger.claim("big-1", "i")).toEqual({ kind: "claimed" });
    await owner.ledger.finish("big-1", "i", "x".repeat(2 * 1024 * 1024), stored);
    expect(await other.ledger.claim("big-1", "i")).toEqual({ kind: "stored", reply: stored });
  });

  it("is recorded as a payload_too_large refusal when its reply was not stored, at once and without renewing the connection", async () => {
    const owner = await ledgerOn();
    const other = await ledgerOn(owner.kv);
    expect(await owner.ledger.claim("big-2", "i")).toEqual({ kind: "claimed" });
    await owner.ledger.finish("big-2", "i", "x".repeat(2 * 1024 * 1024));
    expect(await other.ledger.claim("big-2", "i")).toEqual({
      kind: "too_large",
      message: expect.stringMatching(
        /^this call's outcome \(\d+ bytes\) is more than the call ledger keeps in one record \(NATS max_payload: \d+ bytes\) and its reply was not stored/,
      ),
    });
  });

  it("gives up at once on a write refused for what it is, tried once, counted against no connection", async () => {
    const { bus, kv, lines } = await (async () => {
      const started = await startBus();
      await started.bus.serve(
        { subject: `${uniqueName()}.noop`, name: "noop", request: z.object({}) },
        async () => ({}),
      );
      return { ...started, kv: await scratchBucket(started.bus) };
    })();
    let puts = 0;
    const refusing = new Proxy(kv, {
      get(target, property, receiver) {
        if (property === "put") {
          return () => {
            puts++;
            return Promise.reject(new Error("'payload' max_payload size exceeded"));
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === "function" ? value.bind(target) : value;
      },
    }) as KV;
    const ledger = new CallLedger<string>({ bus, kv: refusing, onOrphan: "take over", pollMs: 20 });
    expect(await ledger.claim("call-9", "i")).toEqual({ kind: "claimed" });
    await expect(ledger.finish("call-9", "i", "a reply")).rejects.toThrow(/max_payload/);
    expect({ puts, renewals: lines.filter((line) => /renewing the connection/.test(line.msg)) }).toEqual({
      puts: 1,
      renewals: [],
    });
  });
});

describe("a ledger under a server's key prefix (a connector's records)", () => {
  it("keeps its records under the prefix, where only that server's connector may write", async () => {
    const { kv, ledger } = await ledgerOn(undefined, "github.");
    expect(await ledger.claim("call-5", "i")).toEqual({ kind: "claimed" });
    await ledger.finish("call-5", "i", "the reply");
    const keys: string[] = [];
    for await (const key of await kv.keys()) keys.push(key);
    expect(keys).toEqual(["github.call-5"]);
    expect(JSON.parse((await kv.get("github.call-5"))!.string())).toMatchObject({
      state: "done",
      outcome: "the reply",
    });
  });

  it("runs the same call id once per server: another server's ledger claims it for itself", async () => {
    const github = await ledgerOn(undefined, "github.");
    const linear = await ledgerOn(github.kv, "linear.");
    expect(await github.ledger.claim("call-6", "i")).toEqual({ kind: "claimed" });
    expect(await linear.ledger.claim("call-6", "i")).toEqual({ kind: "claimed" });
    // And each one's repeat sees its own record.
    expect(await github.ledger.claim("call-6", "i")).toEqual({ kind: "running", owner: github.bus.instance });
  });

  it("is read by another service under the same prefix only", async () => {
    const { bus, kv, ledger } = await ledgerOn(undefined, "github.");
    expect(await ledger.claim("call-7", "i")).toEqual({ kind: "claimed" });
    expect({
      github: await watchedRecord(kv, "call-7", "github.").read(),
      linear: await watchedRecord(kv, "call-7", "linear.").read(),
      unprefixed: await watchedRecord(kv, "call-7").read(),
    }).toEqual({
      github: { state: "running", owner: bus.instance },
      linear: { state: "absent" },
      unprefixed: { state: "absent" },
    });
    await ledger.finish("call-7", "i", "done");
    expect(await watchedRecord(kv, "call-7", "github.").read()).toEqual({ state: "done" });
  });
});
