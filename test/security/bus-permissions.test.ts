/**
 * The bus as an intruder or a compromised service would try it: a nats-server run with the
 * config `toolbus nats-config` writes, and each identity trying what its role must not do —
 * and succeeding at what it must. A refusal is the NATS server's, not a convention.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import {
  connect,
  type NatsConnection,
  nkeyAuthenticator,
  nkeys,
  PermissionViolationError,
} from "@nats-io/transport-node";
import {
  type Bus,
  connectBus,
  createLogger,
  ensureKv,
  ensureStream,
  type NatsIdentities,
  writeNatsIdentities,
} from "@toolbus/bus";
import { createSubjects, inboxPrefix, type Role, WireError } from "@toolbus/protocol";
import { type NatsServerProcess, startNatsServer } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";

const subjects = createSubjects("toolbus");
const silent = createLogger({ service: "attack", version: "0.0.0", level: "silent" });

let server: NatsServerProcess;
let identities: NatsIdentities;
const open: NatsConnection[] = [];
const buses: Bus[] = [];

function seedOf(role: Role): Uint8Array {
  return new TextEncoder().encode(readFileSync(identities.seedFile(role), "utf8").trim());
}

/** A raw nats.js connection as `role`, with its own inbox prefix. */
async function as(role: Role): Promise<NatsConnection> {
  const nc = await connect({
    servers: server.url,
    authenticator: nkeyAuthenticator(seedOf(role)),
    inboxPrefix: inboxPrefix("toolbus", role),
    reconnect: false,
  });
  open.push(nc);
  return nc;
}

/** The bus runtime as `role`: what a toolbus service holds. */
async function busAs(role: Role): Promise<Bus> {
  const bus = await connectBus({
    access: {
      servers: [server.url],
      nkeySeed: new TextDecoder().decode(seedOf(role)),
      inboxPrefix: inboxPrefix("toolbus", role),
    },
    service: { name: role, version: "0.0.1" },
    logger: silent,
  });
  buses.push(bus);
  return bus;
}

/** Resolves with the server's refusal of a subscription, or "allowed" once it is in place. */
async function trySubscribe(nc: NatsConnection, subject: string): Promise<string> {
  const sub = nc.subscribe(subject);
  const refused = sub.closed.then((error) =>
    error instanceof PermissionViolationError ? `refused ${error.subject}` : "closed",
  );
  const allowed = nc.flush().then(() => new Promise((r) => setTimeout(() => r("allowed"), 200)));
  const outcome = (await Promise.race([refused, allowed])) as string;
  if (!sub.isClosed()) sub.unsubscribe();
  return outcome;
}

/** A KV put on `bucket` as `role`: "allowed" or the refused subject. */
async function tryKvPut(role: Role, bucket: string, key: string): Promise<string> {
  const kv = await new Kvm(jetstream(await as(role))).open(bucket, { allow_direct: true } as never);
  try {
    await kv.put(key, '{"forged":true}');
    return "allowed";
  } catch (error) {
    const cause = error instanceof Error ? error.cause : undefined;
    return cause instanceof PermissionViolationError ? `refused ${cause.subject}` : String(error);
  }
}

/**
 * A request through the bus runtime as `role`: the WireError code it fails with, or "answered".
 * A refusal that did not come back at once would fail as `timeout`, so the code says it, not a clock.
 */
async function tryRequest(role: Role, subject: string): Promise<string> {
  const bus = await busAs(role);
  try {
    await bus.request(subject, {}, z.unknown(), { timeoutMs: 5_000 });
    return "answered";
  } catch (error) {
    return error instanceof WireError ? error.code : String(error);
  }
}

/** Publishes as `role` and resolves with the subject the server refused (it says so on the connection). */
async function refusedPublish(role: Role, subject: string): Promise<string | undefined> {
  const bus = await busAs(role);
  const refusal = (async () => {
    for await (const status of bus.nc.status()) {
      if (status.type === "error" && status.error instanceof PermissionViolationError)
        return status.error.subject;
    }
    return undefined;
  })();
  bus.publish(subject, { callId: "call_1", reason: "forged" });
  return refusal;
}

/** Publishes as `from` and resolves with what `to`, subscribed to `subject`, received. */
async function delivered(from: Role, to: Role, subject: string): Promise<unknown> {
  const listener = await as(to);
  const sub = listener.subscribe(subject, { max: 1 });
  const received = (async () => {
    for await (const msg of sub) return msg.json();
    return undefined;
  })();
  // Once flushed, the server has the subscription: the publish below reaches it.
  await listener.flush();
  (await busAs(from)).publish(subject, { callId: "call_1", reason: "the caller left" });
  return received;
}

beforeAll(async () => {
  identities = writeNatsIdentities({ dir: mkdtempSync(join(tmpdir(), "toolbus-ids-")), prefix: "toolbus" });
  server = await startNatsServer({ config: readFileSync(identities.authConf, "utf8") });
  // The owners create the buckets and streams, as the services do at start-up.
  const catalog = await busAs("catalog");
  await ensureStream(await catalog.jsm(), {
    name: subjects.streams.events.name,
    subjects: [...subjects.streams.events.subjects],
  });
  await ensureKv(catalog, subjects.kv.catalog, { history: 1 });
  await ensureKv(await busAs("approvals"), subjects.kv.approvalGrants, { history: 1 });
});

afterAll(async () => {
  for (const bus of buses) await bus.close().catch(() => undefined);
  for (const nc of open) await nc.close().catch(() => undefined);
  await server?.stop();
});

describe("a client without the right credentials", () => {
  it("cannot connect without credentials", async () => {
    await expect(connect({ servers: server.url, reconnect: false })).rejects.toThrow(
      /Authorization Violation/,
    );
  });

  it("cannot connect with an NKey the server does not know", async () => {
    const stranger = nkeys.createUser().getSeed();
    await expect(
      connect({ servers: server.url, authenticator: nkeyAuthenticator(stranger), reconnect: false }),
    ).rejects.toThrow(/Authorization Violation/);
  });

  it("a service started with a stranger's key exits with one line that names the identity", async () => {
    const stranger = new TextDecoder().decode(nkeys.createUser().getSeed());
    await expect(
      connectBus({
        access: {
          servers: [server.url],
          nkeySeed: stranger,
          credentialSource: "NATS_NKEY_FILE=/x/dispatcher.nk",
        },
        service: { name: "dispatcher", version: "0.0.1" },
        logger: silent,
      }),
    ).rejects.toThrow(
      `NATS at ${server.url} refused this identity (NATS_NKEY_FILE=/x/dispatcher.nk): Authorization Violation.`,
    );
  });
});

describe("only the dispatcher runs tools", () => {
  it.each(["gateway", "catalog", "approvals", "memory", "cli", "agent"] as const)(
    "%s may not request connector.<server>.call (unauthorized at once)",
    async (role) => {
      expect(await tryRequest(role, subjects.connectorCall("filesystem"))).toBe("unauthorized");
    },
  );

  it("the dispatcher may (no connector serves it here: server_unavailable, not a refusal)", async () => {
    expect(await tryRequest("dispatcher", subjects.connectorCall("filesystem"))).toBe("server_unavailable");
  });

  it.each(["gateway", "dispatcher", "approvals", "memory", "cli", "agent"] as const)(
    "%s may not serve connector.<server>.call (impersonate a connector)",
    async (role) => {
      expect(await trySubscribe(await as(role), subjects.connectorCall("filesystem"))).toBe(
        `refused ${subjects.connectorCall("filesystem")}`,
      );
    },
  );

  it("the catalog may serve it", async () => {
    expect(await trySubscribe(await as("catalog"), subjects.connectorCall("filesystem"))).toBe("allowed");
  });

  it.each(["gateway", "catalog", "approvals", "memory", "cli", "agent"] as const)(
    "%s may not serve dispatch.call (take calls in the dispatcher's place)",
    async (role) => {
      expect(await trySubscribe(await as(role), subjects.dispatchCall)).toBe(
        `refused ${subjects.dispatchCall}`,
      );
    },
  );
});

describe("only the edge cancels calls, and only the dispatcher stops a connector's call", () => {
  it.each(["catalog", "dispatcher", "approvals", "memory", "cli", "agent"] as const)(
    "%s may not publish calls.<callId>.cancel (cancel another's call)",
    async (role) => {
      expect(await refusedPublish(role, subjects.callCancel("call_1"))).toBe(subjects.callCancel("call_1"));
    },
  );

  it("the gateway may, and the dispatcher hears it", async () => {
    expect(await delivered("gateway", "dispatcher", subjects.callCancel("call_1"))).toEqual({
      callId: "call_1",
      reason: "the caller left",
    });
  });

  it.each(["gateway", "catalog", "approvals", "memory", "cli", "agent"] as const)(
    "%s may not publish connector.<server>.cancel (stop a tool in the dispatcher's place)",
    async (role) => {
      expect(await refusedPublish(role, subjects.connectorCancel("filesystem"))).toBe(
        subjects.connectorCancel("filesystem"),
      );
    },
  );

  it("the dispatcher may, and the catalog hears it", async () => {
    expect(await delivered("dispatcher", "catalog", subjects.connectorCancel("filesystem"))).toEqual({
      callId: "call_1",
      reason: "the caller left",
    });
  });

  it.each(["catalog", "dispatcher", "memory", "cli", "agent"] as const)(
    "%s may not ask approvals to forget a thread's session grants",
    async (role) => {
      expect(await tryRequest(role, subjects.approvalsForgetThreads)).toBe("unauthorized");
    },
  );

  it("the gateway may (nobody serves it here)", async () => {
    expect(await tryRequest("gateway", subjects.approvalsForgetThreads)).toBe("server_unavailable");
  });
});

describe("only approvals decides", () => {
  it.each(["gateway", "catalog", "dispatcher", "memory", "cli", "agent"] as const)(
    "%s may not write the grants bucket",
    async (role) => {
      expect(await tryKvPut(role, subjects.kv.approvalGrants, "t1.github.c.write_file")).toBe(
        `refused $KV.${subjects.kv.approvalGrants}.t1.github.c.write_file`,
      );
    },
  );

  it("approvals may", async () => {
    expect(await tryKvPut("approvals", subjects.kv.approvalGrants, "t1.github.c.write_file")).toBe("allowed");
  });

  it.each(["gateway", "catalog", "dispatcher", "memory", "cli", "agent"] as const)(
    "%s may not serve approvals.decide or publish approvals.resolved",
    async (role) => {
      const nc = await as(role);
      expect(await trySubscribe(nc, subjects.approvalsDecide)).toBe(`refused ${subjects.approvalsDecide}`);
      const bus = await busAs(role);
      // A publish is fire-and-forget: the refusal comes back as the connection's status.
      const refusal = (async () => {
        for await (const status of bus.nc.status()) {
          if (status.type === "error" && status.error instanceof PermissionViolationError)
            return status.error.subject;
        }
        return undefined;
      })();
      bus.publish(subjects.approvalsResolved, {
        requestId: "x",
        callId: "x",
        decision: "approved",
        by: "user",
      });
      expect(await refusal).toBe(subjects.approvalsResolved);
    },
  );

  it("an agent may not answer approvals (approve its own call)", async () => {
    expect(await tryRequest("agent", subjects.approvalsResolve)).toBe("unauthorized");
    expect(await tryRequest("agent", subjects.approvalsList)).toBe("unauthorized");
  });

  it("the gateway and the CLI may ask approvals to resolve (nobody serves it here)", async () => {
    expect(await tryRequest("gateway", subjects.approvalsResolve)).toBe("server_unavailable");
    expect(await tryRequest("cli", subjects.approvalsResolve)).toBe("server_unavailable");
  });
});

describe("only the catalog writes the catalog", () => {
  it.each(["gateway", "dispatcher", "approvals", "memory", "cli", "agent"] as const)(
    "%s may not write the catalog bucket (forge a readOnlyHint)",
    async (role) => {
      expect(await tryKvPut(role, subjects.kv.catalog, "server.filesystem")).toBe(
        `refused $KV.${subjects.kv.catalog}.server.filesystem`,
      );
    },
  );

  it("the catalog may", async () => {
    expect(await tryKvPut("catalog", subjects.kv.catalog, "server.filesystem")).toBe("allowed");
  });
});

describe("only the dispatcher publishes call events, and only some may read them", () => {
  it.each(["gateway", "catalog", "approvals", "memory", "cli", "agent"] as const)(
    "%s may not publish a call end event",
    async (role) => {
      const js = jetstream(await as(role));
      const refused = await js.publish(subjects.callEnd, "{}").then(
        () => "allowed",
        (error: Error) =>
          error.cause instanceof PermissionViolationError ? `refused ${error.cause.subject}` : String(error),
      );
      expect(refused).toBe(`refused ${subjects.callEnd}`);
    },
  );

  it("the dispatcher may", async () => {
    const ack = await jetstream(await as("dispatcher")).publish(subjects.callEnd, "{}");
    expect(ack.stream).toBe(subjects.streams.events.name);
  });

  it.each(["catalog", "approvals", "memory", "agent"] as const)(
    "%s may not listen to call events (arguments and results)",
    async (role) => {
      expect(await trySubscribe(await as(role), subjects.callEnd)).toBe(`refused ${subjects.callEnd}`);
    },
  );

  it("nobody but the dispatcher may read the events stream, and it only through its filter", async () => {
    const attempt = async (role: Role, filter: string) => {
      const jsm = await jetstreamManager(await as(role), { checkAPI: false });
      return jsm.consumers
        .add(subjects.streams.events.name, { name: `probe_${role}`, filter_subject: filter })
        .then(
          () => "allowed",
          (error: Error) => (error.cause instanceof PermissionViolationError ? "refused" : String(error)),
        );
    };
    expect(await attempt("gateway", `${subjects.prefix}.events.>`)).toBe("refused");
    expect(await attempt("agent", `${subjects.prefix}.events.call.>`)).toBe("refused");
    expect(await attempt("dispatcher", `${subjects.prefix}.events.>`)).toBe("refused");
    expect(await attempt("dispatcher", `${subjects.prefix}.events.call.>`)).toBe("allowed");
  });
});

describe("replies stay with whoever asked", () => {
  it.each(["gateway", "dispatcher", "cli", "agent"] as const)(
    "%s may not read every reply (_INBOX.>) or another identity's inbox",
    async (role) => {
      const nc = await as(role);
      expect(await trySubscribe(nc, "_INBOX.>")).toBe("refused _INBOX.>");
      const other: Role = role === "dispatcher" ? "gateway" : "dispatcher";
      const theirs = `${inboxPrefix("toolbus", other)}.>`;
      expect(await trySubscribe(nc, theirs)).toBe(`refused ${theirs}`);
    },
  );
});
