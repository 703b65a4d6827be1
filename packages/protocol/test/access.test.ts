// The permission matrix as data: who may do what, and the grants that must never appear.
import { describe, expect, it } from "vitest";
import {
  BUCKETS,
  INTERNAL_SUBJECTS,
  inboxPrefix,
  internalSubjects,
  permissionsFor,
  ROLES,
} from "../src/access.js";
import { createSubjects, QueueGroup, SUBJECTS } from "../src/subjects.js";

const subjects = createSubjects("toolbus");
const matrix = new Map(ROLES.map((role) => [role, permissionsFor(role, subjects)]));
/** Roles that are toolbus services (they serve subjects and may answer requests). */
const SERVICE_ROLES: readonly string[] = Object.values(QueueGroup);
const who = (kind: "publish" | "subscribe", subject: string) =>
  ROLES.filter((role) => matrix.get(role)![kind].includes(subject));

describe("the subject tables", () => {
  it("name only known roles, and an owner that is a service", () => {
    for (const row of [...SUBJECTS, ...INTERNAL_SUBJECTS]) {
      expect(SERVICE_ROLES).toContain(row.owner);
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

describe("permissionsFor", () => {
  it("lets only the dispatcher ask a connector to run a tool, and only the catalog answer", () => {
    expect(who("publish", "toolbus.connector.*.call")).toEqual(["dispatcher"]);
    expect(who("subscribe", "toolbus.connector.*.call")).toEqual(["catalog"]);
  });

  it("lets only the gateway cancel a call, the dispatcher stop a connector's call, and the gateway end session grants", () => {
    expect({
      cancel: [who("publish", subjects.callCancelAll), who("subscribe", subjects.callCancelAll)],
      stop: [who("publish", subjects.connectorCancelAll), who("subscribe", subjects.connectorCancelAll)],
      forget: [
        who("publish", subjects.approvalsForgetThreads),
        who("subscribe", subjects.approvalsForgetThreads),
      ],
    }).toEqual({
      cancel: [["gateway"], ["dispatcher"]],
      stop: [["dispatcher"], ["catalog"]],
      forget: [["gateway"], ["approvals"]],
    });
  });

  it("lets only approvals decide, resolve and write grants; only the catalog write the catalog", () => {
    expect(who("subscribe", subjects.approvalsDecide)).toEqual(["approvals"]);
    expect(who("subscribe", subjects.approvalsResolve)).toEqual(["approvals"]);
    expect(who("publish", subjects.approvalsResolved)).toEqual(["approvals"]);
    expect(who("publish", `$KV.${subjects.kv.approvalGrants}.>`)).toEqual(["approvals"]);
    expect(who("publish", `$KV.${subjects.kv.catalog}.>`)).toEqual(["catalog"]);
  });

  it("lets only approvals write the approval policy, and only the dispatcher read it besides", () => {
    const bucket = internalSubjects("toolbus").kv.approvalPolicy;
    expect({
      write: who("publish", `$KV.${bucket}.>`),
      read: who("publish", `$JS.API.DIRECT.GET.KV_${bucket}.$KV.${bucket}.>`),
      watch: who("publish", `$JS.API.CONSUMER.CREATE.KV_${bucket}.*.$KV.${bucket}.>`),
    }).toEqual({
      write: ["approvals"],
      read: ["dispatcher", "approvals"],
      watch: ["dispatcher", "approvals"],
    });
  });

  it("lets only the dispatcher publish call events; the gateway and the CLI may listen", () => {
    expect(who("publish", subjects.callBegin)).toEqual(["dispatcher"]);
    expect(who("publish", subjects.callEnd)).toEqual(["dispatcher"]);
    expect(who("subscribe", subjects.callEnd)).toEqual(["gateway", "cli"]);
  });

  it("never grants a whole space, an unfiltered read of a stream, or another identity's replies", () => {
    for (const role of ROLES) {
      const { publish, subscribe } = matrix.get(role)!;
      for (const subject of [...publish, ...subscribe]) {
        expect(subject).not.toBe(">");
        expect(subject).not.toMatch(/^\$JS\.API\.>$|^_INBOX\.|^\$JS\.API\.CONSUMER\.CREATE\.[^.]+$/);
        // A direct get names the key space (pitfall: a bare DIRECT.GET reads any message), but for
        // the dispatcher's read of its own call events by sequence (checked below); a large reply
        // only the replies addressed to the role itself.
        if (subject.startsWith("$JS.API.DIRECT.GET.")) {
          expect(subject).toMatch(
            new RegExp(
              `\\.\\$KV\\.|^\\$JS\\.API\\.DIRECT\\.GET\\.TOOLBUS_EVENTS$|^\\$JS\\.API\\.DIRECT\\.GET\\.TOOLBUS_LARGE\\.toolbus\\.large\\.${role}\\.>$`,
            ),
          );
        }
      }
      expect(subscribe.filter((s) => s.startsWith("_INBOX"))).toEqual([`${inboxPrefix("toolbus", role)}.>`]);
    }
  });

  it("lets each service use the subjects it builds from the protocol's names, and no one else", () => {
    const built = internalSubjects("toolbus");
    const owner = Object.values(built.connectorOwner("*"));
    const both = (subject: string) => ({
      publish: who("publish", subject),
      subscribe: who("subscribe", subject),
    });
    expect({
      relays: [subjects.callRelayEvery("progress"), subjects.callRelayEvery("logging")].map(both),
      owner: owner.map(both),
      sessionClosed: both(built.gatewaySessionClosed),
      responses: both(built.gatewayResponses),
      parked: both(built.memoryParked),
    }).toEqual({
      relays: [
        { publish: ["catalog"], subscribe: ["gateway", "cli"] },
        { publish: ["catalog"], subscribe: ["gateway"] },
      ],
      // Any replica hands a server's part to the replica that owns it.
      owner: owner.map(() => ({ publish: ["catalog"], subscribe: ["catalog"] })),
      sessionClosed: { publish: ["gateway"], subscribe: ["gateway"] },
      responses: { publish: ["gateway"], subscribe: ["gateway"] },
      parked: { publish: ["cli"], subscribe: ["memory"] },
    });
  });

  it("lets the catalog and the dispatcher store large replies, each reader read only its own, and nobody remove one", () => {
    const stream = subjects.streams.large.name;
    const admin = ["CREATE", "INFO", "UPDATE"].map((op) => `$JS.API.STREAM.${op}.${stream}`);
    const readOwn = (role: string) => `$JS.API.DIRECT.GET.${stream}.toolbus.large.${role}.>`;
    expect({
      store: who("publish", "toolbus.large.*.>"),
      // Every grant that names the stream: no purge, no message delete, no read by sequence,
      // no consumer, no direct get beyond the replies addressed to the role itself.
      grants: Object.fromEntries(
        ROLES.map((role) => [role, matrix.get(role)!.publish.filter((subject) => subject.includes(stream))]),
      ),
    }).toEqual({
      store: ["catalog", "dispatcher"],
      grants: {
        catalog: admin,
        dispatcher: [readOwn("dispatcher"), ...admin],
        approvals: [],
        memory: [],
        gateway: [readOwn("gateway")],
        cli: [readOwn("cli")],
        agent: [readOwn("agent")],
      },
    });
  });

  it("lets only the dispatcher read the events stream by sequence (its history index)", () => {
    expect(who("publish", "$JS.API.DIRECT.GET.TOOLBUS_EVENTS")).toEqual(["dispatcher"]);
  });

  it("answers requests only for the services (allow_responses)", () => {
    expect(ROLES.filter((role) => matrix.get(role)!.allowResponses)).toEqual([...SERVICE_ROLES]);
  });

  it("follows the prefix: nothing of the default prefix remains under another", () => {
    const tenant = permissionsFor("dispatcher", createSubjects("tenant-a"));
    const all = [...tenant.publish, ...tenant.subscribe].join(" ");
    expect(all).not.toMatch(/(^|[ .])toolbus[._]/);
    expect(tenant.publish).toContain("tenant-a.connector.*.call");
    expect(tenant.publish).toContain("$JS.API.STREAM.INFO.TENANT_A_EVENTS");
  });
});
