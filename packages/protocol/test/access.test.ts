// The permission matrix as data: who may do what, and the grants that must never appear. A
// subject is "allowed" when some entry of the allow list matches it as NATS matches it (`covers`),
// so a wildcard that reaches too far is caught as surely as a wrong literal.
import { describe, expect, it } from "vitest";
import {
  BUCKETS,
  busIdentities,
  covers,
  type Identity,
  INTERNAL_SUBJECTS,
  identityName,
  identityOf,
  inboxPrefix,
  internalSubjects,
  JS_API,
  LOCAL_JS_API,
  localKvWrite,
  permissionsFor,
  ROLES,
  serverKeyPrefix,
} from "../src/access.js";
import { createSubjects, QueueGroup, SUBJECTS } from "../src/subjects.js";

const subjects = createSubjects("toolbus");
/** A deployment with two MCP servers: each has a connector identity of its own. */
const IDENTITIES: readonly Identity[] = busIdentities(["github", "linear"]);
const matrix = new Map(
  IDENTITIES.map((identity) => [identityName(identity), permissionsFor(identity, subjects)]),
);
const NAMES = [...matrix.keys()];
/** Roles that serve subjects: the services, and each server's connector. */
const SERVING_ROLES: readonly string[] = [...Object.values(QueueGroup), "connector"];
const allowed = (kind: "publish" | "subscribe", name: string, subject: string) =>
  matrix.get(name)![kind].some((pattern) => covers(pattern, subject));
/** The identities allowed to publish (or subscribe to) every subject `subject` can be. */
const who = (kind: "publish" | "subscribe", subject: string) =>
  NAMES.filter((name) => allowed(kind, name, subject));
/** A JetStream API request as an identity sends it (its account reaches JetStream under LOCAL_JS_API). */
const api = (rest: string) => `${LOCAL_JS_API}.${rest}`;
const kvWrite = (bucket: string, key: string) => localKvWrite(`$KV.${bucket}.${key}`);
const kvRead = (bucket: string, key: string) => api(`DIRECT.GET.KV_${bucket}.$KV.${bucket}.${key}`);

describe("the subject tables", () => {
  it("name only known roles, and an owner that serves (a service or a server's connector)", () => {
    for (const row of [...SUBJECTS, ...INTERNAL_SUBJECTS]) {
      expect(SERVING_ROLES).toContain(row.owner);
      for (const user of row.users) expect(ROLES).toContain(user);
    }
  });

  it("list exactly the internal subjects the services build with internalSubjects()", () => {
    const built = internalSubjects("toolbus");
    const owner = built.connectorOwner("<server>");
    expect(INTERNAL_SUBJECTS.map((row) => row.subject).sort()).toEqual(
      [
        built.memoryParked,
        ...Object.values(owner),
        built.gatewaySessionClosed,
        built.gatewayResponses,
      ].sort(),
    );
    expect(BUCKETS.map((b) => b.bucket)).toEqual(
      expect.arrayContaining([subjects.kv.catalog, subjects.kv.approvalGrants, ...Object.values(built.kv)]),
    );
  });
});

describe("identities", () => {
  it("are one per role, one connector per configured server, named after the server", () => {
    expect(NAMES).toEqual([
      "catalog",
      "dispatcher",
      "approvals",
      "memory",
      "gateway",
      "cli",
      "agent",
      "provisioner",
      "connector-github",
      "connector-linear",
    ]);
  });

  it("refuse a connector without a server, or with a name that could widen its subjects", () => {
    for (const server of [undefined, "*", ">", "a.b", ""]) {
      expect(() => identityOf("connector", server)).toThrow(
        "a connector identity needs the name of its MCP server",
      );
    }
  });
});

describe("permissionsFor", () => {
  it("lets only the dispatcher ask a connector to run a tool, and only that server's connector answer", () => {
    expect({
      ask: who("publish", subjects.connectorCall("github")),
      answer: who("subscribe", subjects.connectorCall("github")),
      every: who("subscribe", "toolbus.connector.*.call"),
    }).toEqual({ ask: ["dispatcher"], answer: ["connector-github"], every: [] });
  });

  it("lets only the gateway cancel a call, the dispatcher stop a connector's call, and the gateway end session grants", () => {
    expect({
      cancel: [who("publish", subjects.callCancel("c1")), who("subscribe", subjects.callCancelAll)],
      stop: [
        who("publish", subjects.connectorCancel("linear")),
        who("subscribe", subjects.connectorCancel("linear")),
      ],
      forget: [
        who("publish", subjects.approvalsForgetThreads),
        who("subscribe", subjects.approvalsForgetThreads),
      ],
    }).toEqual({
      cancel: [["gateway"], ["dispatcher"]],
      stop: [["dispatcher"], ["connector-linear"]],
      forget: [["gateway"], ["approvals"]],
    });
  });

  it("lets only approvals decide, resolve and write grants", () => {
    expect(who("subscribe", subjects.approvalsDecide)).toEqual(["approvals"]);
    expect(who("subscribe", subjects.approvalsResolve)).toEqual(["approvals"]);
    expect(who("publish", subjects.approvalsResolved)).toEqual(["approvals"]);
    expect(who("publish", kvWrite(subjects.kv.approvalGrants, "any_key"))).toEqual(["approvals"]);
  });

  it("lets a connector write its own server's catalog entry and no other key; the catalog only its naming", () => {
    const bucket = subjects.kv.catalog;
    expect({
      github: who("publish", kvWrite(bucket, "server.github")),
      linear: who("publish", kvWrite(bucket, "server.linear")),
      naming: who("publish", kvWrite(bucket, "naming")),
      other: who("publish", kvWrite(bucket, "server.other")),
    }).toEqual({
      github: ["connector-github"],
      linear: ["connector-linear"],
      naming: ["catalog"],
      other: [],
    });
  });

  it("keeps each connector's call records and resource origins under its own server", () => {
    const internal = internalSubjects("toolbus");
    const key = (server: string) => `${serverKeyPrefix(server)}call_1`;
    expect({
      writeExecution: who("publish", kvWrite(internal.kv.executions, key("github"))),
      readExecution: who("publish", kvRead(internal.kv.executions, key("github"))),
      writeOrigin: who("publish", kvWrite(internal.kv.resourceOrigins, key("linear"))),
      readOrigin: who("publish", kvRead(internal.kv.resourceOrigins, key("linear"))),
      // A key outside every server's space is nobody's to write.
      unowned: who("publish", kvWrite(internal.kv.executions, "call_1")),
    }).toEqual({
      writeExecution: ["connector-github"],
      readExecution: ["dispatcher", "connector-github"],
      writeOrigin: ["connector-linear"],
      readOrigin: ["catalog", "connector-linear"],
      unowned: [],
    });
  });

  it("lets only approvals write the approval policy, and only the dispatcher read it besides", () => {
    const bucket = internalSubjects("toolbus").kv.approvalPolicy;
    expect({
      write: who("publish", kvWrite(bucket, "effective")),
      writeOther: who("publish", kvWrite(bucket, "other")),
      read: who("publish", kvRead(bucket, "effective")),
      watch: who("publish", api(`CONSUMER.CREATE.KV_${bucket}.w1.$KV.${bucket}.effective`)),
    }).toEqual({
      write: ["approvals"],
      writeOther: [],
      read: ["dispatcher", "approvals"],
      watch: ["dispatcher"],
    });
  });

  it("lets only the dispatcher publish call events; the gateway and the CLI may listen", () => {
    expect(who("publish", subjects.callBegin)).toEqual(["dispatcher"]);
    expect(who("publish", subjects.callEnd)).toEqual(["dispatcher"]);
    expect(who("subscribe", subjects.callEnd)).toEqual(["gateway", "cli"]);
  });

  it("lets a server's status and relays come from its own connector only", () => {
    expect({
      status: who("publish", subjects.serverStatus("github")),
      progress: who("publish", subjects.callRelay("c1", "github", "progress")),
      logging: who("publish", subjects.callRelay("c1", "linear", "logging")),
      elicitation: who("publish", subjects.callRelay("c1", "github", "elicitation")),
      sampling: who("publish", subjects.callRelay("c1", "linear", "sampling")),
    }).toEqual({
      status: ["connector-github"],
      progress: ["connector-github"],
      logging: ["connector-linear"],
      elicitation: ["connector-github"],
      sampling: ["connector-linear"],
    });
  });

  it("lets each service use the subjects it builds from the protocol's names, and no one else", () => {
    const built = internalSubjects("toolbus");
    const owner = Object.values(built.connectorOwner("github"));
    const both = (subject: string) => ({
      publish: who("publish", subject),
      subscribe: who("subscribe", subject),
    });
    expect({
      relays: [
        subjects.callRelayEvery("progress"),
        subjects.callRelayEvery("logging"),
        subjects.callRelayEvery("elicitation"),
      ].map((subject) => who("subscribe", subject)),
      owner: owner.map(both),
      sessionClosed: both(built.gatewaySessionClosed),
      responses: both(built.gatewayResponses),
      parked: both(built.memoryParked),
    }).toEqual({
      relays: [["gateway", "cli"], ["gateway"], ["gateway"]],
      // The catalog hands a server's part to that server's connector.
      owner: owner.map(() => ({ publish: ["catalog"], subscribe: ["connector-github"] })),
      sessionClosed: { publish: ["gateway"], subscribe: ["gateway"] },
      responses: { publish: ["gateway"], subscribe: ["gateway"] },
      parked: { publish: ["cli"], subscribe: ["memory"] },
    });
  });

  it("never grants a whole space, an unfiltered read of a stream, or another identity's replies", () => {
    for (const [name, { publish, subscribe }] of matrix) {
      for (const subject of [...publish, ...subscribe]) {
        expect(subject).not.toBe(">");
        expect(subject).not.toMatch(/^\$(JS|TOOLBUS\.JS)\.API\.>$|^_INBOX\.|\.CONSUMER\.CREATE\.[^.]+$/);
        // A direct get names the subjects it reads (pitfall: a bare DIRECT.GET reads any message).
        if (subject.includes(".DIRECT.GET.")) expect(subject).toMatch(/\.DIRECT\.GET\.[^.]+\.[^.]+/);
      }
      const own = inboxPrefix("toolbus", IDENTITIES.find((identity) => identityName(identity) === name)!);
      expect(subscribe.filter((s) => s.startsWith("_INBOX"))).toEqual([`${own}.>`]);
    }
  });

  it("lets no one but the provisioner create, change or delete a stream or the memory consumer", () => {
    const changes = (stream: string) => [
      ...["CREATE", "UPDATE", "DELETE", "PURGE"].flatMap((verb) => [
        `${JS_API}.STREAM.${verb}.${stream}`,
        api(`STREAM.${verb}.${stream}`),
      ]),
    ];
    const memory = subjects.streams.memory.name;
    for (const stream of [subjects.streams.events.name, memory, `KV_${subjects.kv.catalog}`]) {
      const changers = new Set(changes(stream).flatMap((subject) => who("publish", subject)));
      expect([...changers]).toEqual(["provisioner"]);
    }
    expect(who("publish", `${JS_API}.STREAM.DELETE.${memory}`)).toEqual([]);
    expect(who("publish", `${JS_API}.STREAM.PURGE.${memory}`)).toEqual([]);
    const consumer = [
      `CONSUMER.CREATE.${memory}.memory.toolbus.memory.message`,
      `CONSUMER.DURABLE.CREATE.${memory}.memory`,
      `CONSUMER.DELETE.${memory}.memory`,
    ];
    expect(
      consumer.flatMap((rest) => [...who("publish", api(rest)), ...who("publish", `${JS_API}.${rest}`)]),
    ).toEqual(["provisioner"]);
    // The memory service reads from the consumer it was given.
    expect(who("publish", api(`CONSUMER.MSG.NEXT.${memory}.memory`))).toEqual(["memory"]);
  });

  it("gives the provisioner the streams' configuration and nothing of their messages", () => {
    const { publish, subscribe, allowResponses } = matrix.get("provisioner")!;
    expect(
      publish.filter(
        (subject) => !/^\$JS\.API\.(STREAM\.(INFO|CREATE|UPDATE)|CONSUMER\.(INFO|CREATE))\./.test(subject),
      ),
    ).toEqual([]);
    expect({ subscribe, allowResponses }).toEqual({
      subscribe: ["_INBOX_toolbus_provisioner.>"],
      allowResponses: false,
    });
  });

  it("lets no one read the events stream but the dispatcher, through consumers filtered to call events", () => {
    const events = subjects.streams.events.name;
    expect({
      byDirectGet: who("publish", api(`DIRECT.GET.${events}`)),
      bySequence: who("publish", api(`STREAM.MSG.GET.${events}`)),
      callEvents: who("publish", api(`CONSUMER.CREATE.${events}.c1.toolbus.events.call.>`)),
      everything: who("publish", api(`CONSUMER.CREATE.${events}.c1.toolbus.events.>`)),
    }).toEqual({ byDirectGet: [], bySequence: [], callEvents: ["dispatcher"], everything: [] });
  });

  it("lets the answering services store large replies, each reader read only its own, and nobody remove one", () => {
    const stream = subjects.streams.large.name;
    const reads = (name: string) => api(`DIRECT.GET.${stream}.toolbus.large.${name}.x.0`);
    expect({
      store: who("publish", "toolbus.large.gateway.x.0"),
      readOwn: NAMES.filter((name) => allowed("publish", name, reads(name))),
      readOthers: NAMES.filter((name) =>
        NAMES.some((other) => other !== name && allowed("publish", name, reads(other))),
      ),
      remove: NAMES.filter((name) =>
        ["PURGE", "MSG.DELETE", "MSG.GET", "DELETE"].some((op) =>
          allowed("publish", name, api(`STREAM.${op}.${stream}`)),
        ),
      ),
    }).toEqual({
      store: ["catalog", "dispatcher", "connector-github", "connector-linear"],
      readOwn: ["catalog", "dispatcher", "gateway", "cli", "agent"],
      readOthers: [],
      remove: [],
    });
  });

  it("answers requests only for the identities that serve (allow_responses)", () => {
    expect(NAMES.filter((name) => matrix.get(name)!.allowResponses)).toEqual([
      "catalog",
      "dispatcher",
      "approvals",
      "memory",
      "gateway",
      "connector-github",
      "connector-linear",
    ]);
  });

  it("follows the prefix: nothing of the default prefix remains under another", () => {
    const tenant = createSubjects("tenant-a");
    for (const identity of IDENTITIES) {
      const permissions = permissionsFor(identity, tenant);
      const all = [...permissions.publish, ...permissions.subscribe].join(" ");
      expect(all).not.toMatch(/(^|[ .$])toolbus[._]/);
    }
    const dispatcher = permissionsFor("dispatcher", tenant);
    expect(dispatcher.publish).toContain("tenant-a.connector.*.call");
    expect(dispatcher.publish).toContain(api("STREAM.INFO.TENANT_A_EVENTS"));
  });
});
