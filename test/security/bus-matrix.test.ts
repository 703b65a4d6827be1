/**
 * The permission matrix, proven by attempt, on every nats-server this machine has (the 2.10 the
 * deploy files pin, and the system's): each identity `toolbus nats-config` emits tries every
 * JetStream API subject on every asset, a configuration change of every stream and bucket, every
 * subject of the contract in both directions, and every way of having NATS publish on its
 * behalf into a stream it may not write. What the access tables allow must work; the rest must
 * be refused. Nothing here runs a toolbus service: the server's enforcement is what is tested.
 */
import { randomUUID } from "node:crypto";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import {
  assetStreams,
  BUCKETS,
  bucketName,
  bucketStream,
  busIdentities,
  covers,
  createSubjects,
  grantKeys,
  type Identity,
  INTERNAL_SUBJECTS,
  identityName,
  identityOf,
  identityUse,
  inboxPrefix,
  JS_API,
  PRINCIPAL_FIELDS,
  permissionsFor,
  principalSubjectsServed,
  type Role,
  SUBJECTS,
  type SubjectSpec,
  senderOf,
  taggedSubject,
  withPrefix,
} from "@toolbus/protocol";
import { natsServerBinaries } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EnforcingBus, startEnforcingBus } from "./support/enforcing-bus.js";

const SERVERS = ["alpha", "beta"];
/** How long a message that was sent is given to arrive before its absence counts. */
const SETTLE_MS = 400;

type Outcome = "answered" | "refused";

/** A JetStream API request: refused by the server (no permission, no import, no JetStream here) or answered. */
async function tryApi(nc: NatsConnection, subject: string, body: string): Promise<Outcome | string> {
  try {
    const reply = await nc.request(subject, body, { timeout: 3_000 });
    const text = reply.string();
    // An account that imports no JetStream for this subject answers it itself: refused.
    if (/JetStream not enabled for account/.test(text)) return "refused";
    return "answered";
  } catch (error) {
    const text = `${(error as Error).message} ${String((error as Error).cause ?? "")}`;
    if (/Permissions Violation|no responders|503/i.test(text)) return "refused";
    return `unexpected: ${text}`;
  }
}

/** Every JetStream API subject, after `$JS.API.`, on one stream: each verb, with the names and filters worth trying. */
function apiSubjectsOn(stream: string, filters: readonly string[], keys: readonly string[]): string[] {
  const consumers = ["probe", "memory"];
  return [
    `STREAM.CREATE.${stream}`,
    `STREAM.UPDATE.${stream}`,
    `STREAM.INFO.${stream}`,
    `STREAM.DELETE.${stream}`,
    `STREAM.PURGE.${stream}`,
    `STREAM.SNAPSHOT.${stream}`,
    `STREAM.RESTORE.${stream}`,
    `STREAM.MSG.DELETE.${stream}`,
    `STREAM.MSG.GET.${stream}`,
    `STREAM.LEADER.STEPDOWN.${stream}`,
    `STREAM.PEER.REMOVE.${stream}`,
    `ACCOUNT.STREAM.MOVE.${stream}`,
    `DIRECT.GET.${stream}`,
    ...keys.map((key) => `DIRECT.GET.${stream}.${key}`),
    `CONSUMER.CREATE.${stream}`,
    `CONSUMER.NAMES.${stream}`,
    `CONSUMER.LIST.${stream}`,
    ...consumers.flatMap((c) => [
      `CONSUMER.CREATE.${stream}.${c}`,
      ...filters.map((filter) => `CONSUMER.CREATE.${stream}.${c}.${filter}`),
      `CONSUMER.DURABLE.CREATE.${stream}.${c}`,
      `CONSUMER.INFO.${stream}.${c}`,
      `CONSUMER.DELETE.${stream}.${c}`,
      `CONSUMER.MSG.NEXT.${stream}.${c}`,
      `CONSUMER.LEADER.STEPDOWN.${stream}.${c}`,
      `CONSUMER.PAUSE.${stream}.${c}`,
      `CONSUMER.UNPIN.${stream}.${c}`,
      `CONSUMER.RESET.${stream}.${c}`,
    ]),
  ];
}

/** A body that no allowed call can change anything with: JetStream answers it with an error or a read. */
function harmlessBody(subject: string): string {
  if (subject.includes(".MSG.NEXT.")) return JSON.stringify({ batch: 1, no_wait: true });
  if (subject.includes(".MSG.GET.") || /DIRECT\.GET\.[^.]+$/.test(subject)) return JSON.stringify({ seq: 1 });
  if (subject.includes("DIRECT.GET.")) return "";
  return "{}";
}

/** The subjects each asset stream holds, the filters worth trying on it and some keys to read. */
function assetProbes(bus: EnforcingBus) {
  const prefix = bus.subjects.prefix;
  const probes = new Map<string, { filters: string[]; keys: string[]; captured: string }>();
  for (const spec of BUCKETS) {
    const bucket = bucketName(spec.bucket, prefix);
    const scopes = new Set<string>([">"]);
    for (const grant of spec.grants) {
      for (const server of SERVERS)
        scopes.add(grantKeys(grant, identityOf(grant.role, grant.role === "connector" ? server : undefined)));
    }
    const filters = [...scopes].map((keys) => `$KV.${bucket}.${keys}`);
    const keys = [...scopes].map(
      (keys) => `$KV.${bucket}.${keys.replace(">", "probe").replace("*", "probe")}`,
    );
    probes.set(bucketStream(bucket), { filters, keys, captured: `$KV.${bucket}.deputy` });
  }
  const { events, memory, large } = bus.subjects.streams;
  probes.set(events.name, {
    filters: [`${prefix}.events.>`, `${prefix}.events.call.>`, `${prefix}.events.server.>`],
    keys: [`${prefix}.events.call.begin`, `${prefix}.events.server.alpha`],
    captured: `${prefix}.events.deputy`,
  });
  probes.set(memory.name, {
    filters: [`${prefix}.memory.message`, `${prefix}.memory.>`],
    keys: [`${prefix}.memory.message`],
    captured: `${prefix}.memory.message`,
  });
  const names = bus.identities.map(identityName);
  probes.set(large.name, {
    filters: [`${prefix}.large.>`, ...names.map((n) => `${prefix}.large.${n}.>`)],
    keys: names.map((n) => `${prefix}.large.${n}.probe.0`),
    captured: `${prefix}.large.deputy.x.0`,
  });
  return probes;
}

/** `subject` with the default prefix, as the subject tables name it. */
function unprefixed(bus: EnforcingBus, subject: string): string {
  return `toolbus${subject.slice(bus.subjects.prefix.length)}`;
}

/** The contract's subjects made concrete for the configured servers: who may send, who may receive. */
function contractFlows(bus: EnforcingBus) {
  const flows = new Map<
    string,
    { subject: string; row: SubjectSpec; senders: Identity[]; receivers: Identity[] }
  >();
  for (const row of [...SUBJECTS, ...INTERNAL_SUBJECTS]) {
    if (row.subject === "toolbus.memory.message") continue; // into its stream only: the API matrix tests it
    const callId = `c${randomUUID().slice(0, 8)}`;
    const perServer = row.subject.includes("<server>") || [row.owner, ...row.users].includes("connector");
    for (const server of perServer ? SERVERS : [undefined]) {
      const who = (role: Role) => identityOf(role, role === "connector" ? server : undefined);
      const subject = withPrefix(row.subject, bus.subjects.prefix, server).replaceAll("*", callId);
      const owner = who(row.owner);
      const users = row.users.map(who);
      // A subject every server's connector uses (`events.catalog`) is one flow with all of them.
      const flow = flows.get(subject) ?? { subject, row, senders: [], receivers: [] };
      if (row.kind === "req/reply") {
        flow.senders.push(...users);
        flow.receivers.push(owner);
      } else {
        flow.senders.push(owner);
        flow.receivers.push(...users);
      }
      flows.set(subject, flow);
    }
  }
  return [...flows.values()];
}

/**
 * Subscribes as every identity to `subject` (and, for a subject that may name a principal, to
 * its sender-tagged form too), then resolves with who received which senders' messages: a
 * message that arrived tagged is recorded as `<body> via <tag>`.
 */
async function listenAll(bus: EnforcingBus, subject: string) {
  const received = new Map<string, Set<string>>();
  const subscriptions: Subscription[] = [];
  const tagged = unprefixed(bus, subject) in PRINCIPAL_FIELDS;
  for (const identity of bus.identities) {
    const nc = await bus.as(identity);
    const got = new Set<string>();
    received.set(identityName(identity), got);
    for (const listened of tagged ? principalSubjectsServed(subject) : [subject]) {
      try {
        subscriptions.push(
          nc.subscribe(listened, {
            callback: (error, msg) => {
              if (error) return;
              const tag = senderOf(subject, msg.subject);
              got.add(tag === undefined ? msg.string() : `${msg.string()} via ${tag}`);
            },
          }),
        );
      } catch {
        // Refused at once by the client: receives nothing, as it must not.
      }
    }
  }
  await Promise.all(
    bus.identities.map(async (identity) => (await bus.as(identity)).flush().catch(() => undefined)),
  );
  return {
    received,
    stop: () => {
      for (const subscription of subscriptions) if (!subscription.isClosed()) subscription.unsubscribe();
    },
  };
}

const binaries = natsServerBinaries();

describe.each(binaries.map((b) => [b.version, b.path]))("on nats-server %s", (_version, binary) => {
  let bus: EnforcingBus;
  beforeAll(async () => {
    bus = await startEnforcingBus({ binary, servers: SERVERS });
  }, 60_000);
  afterAll(async () => {
    await bus?.stop();
  });

  it("refuses a client without credentials, and one with a key the server does not know", async () => {
    const { connect, nkeyAuthenticator, nkeys } = await import("@nats-io/transport-node");
    await expect(connect({ servers: bus.server.url, reconnect: false })).rejects.toThrow(/Authorization/i);
    const stranger = nkeys.createUser().getSeed();
    await expect(
      connect({ servers: bus.server.url, authenticator: nkeyAuthenticator(stranger), reconnect: false }),
    ).rejects.toThrow(/Authorization/i);
  });

  it("lets each identity reach exactly the JetStream API the tables give it, on every asset", async () => {
    const probes = assetProbes(bus);
    const wrong: string[] = [];
    for (const identity of bus.identities) {
      const nc = await bus.as(identity);
      // The provisioner's account is JetStream's own: its allow list names the API as JetStream does.
      const allowed =
        identity.role === "provisioner"
          ? permissionsFor(identity, bus.subjects).publish
          : identityUse(identity, bus.subjects).jetStreamApi;
      const attempts: Array<{ subject: string; local: string; expected: Outcome }> = [];
      for (const stream of [...assetStreams(bus.subjects), "OTHER_STREAM"]) {
        const probe = probes.get(stream) ?? { filters: ["other.>"], keys: ["other.x"] };
        for (const rest of [
          "INFO",
          "ACCOUNT.PURGE.TOOLBUS",
          "SERVER.REMOVE",
          "META.LEADER.STEPDOWN",
          ...apiSubjectsOn(stream, probe.filters, probe.keys),
        ]) {
          const subject = `${JS_API}.${rest}`;
          const expected = allowed.some((pattern) => covers(pattern, subject)) ? "answered" : "refused";
          attempts.push({ subject, local: `${bus.apiOf(identity)}.${rest}`, expected });
          // Through JetStream's own prefix in its own account too: never anything but a refusal.
          if (identity.role !== "provisioner")
            attempts.push({ subject, local: subject, expected: "refused" });
        }
      }
      for (let i = 0; i < attempts.length; i += 64) {
        const batch = attempts.slice(i, i + 64);
        const outcomes = await Promise.all(batch.map((a) => tryApi(nc, a.local, harmlessBody(a.local))));
        batch.forEach((a, j) => {
          if (outcomes[j] !== a.expected)
            wrong.push(`${identityName(identity)} ${a.local}: ${outcomes[j]}, expected ${a.expected}`);
        });
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);

  it("lets each identity write exactly the KV keys the tables give it, in every bucket", async () => {
    const wrong: string[] = [];
    let stored = 0;
    for (const identity of bus.identities.filter((i) => i.role !== "provisioner")) {
      const nc = await bus.as(identity);
      const writable = identityUse(identity, bus.subjects).kvWrites;
      for (const spec of BUCKETS) {
        const bucket = bucketName(spec.bucket, bus.subjects.prefix);
        const keys = new Set<string>(["probe"]);
        for (const grant of spec.grants) {
          for (const server of SERVERS) {
            const owner = identityOf(grant.role, grant.role === "connector" ? server : undefined);
            keys.add(grantKeys(grant, owner).replace(">", "probe").replace("*", "probe"));
          }
        }
        for (const key of keys) {
          const subject = `$KV.${bucket}.${key}`;
          const expected = writable.some((pattern) => covers(pattern, subject));
          for (const [local, allowed] of [
            [`${bus.apiOf(identity)}.${subject}`, expected],
            [subject, false],
          ] as const) {
            const outcome = await nc
              .request(local, "written", { timeout: 3_000 })
              .then((ack) => (/"seq"/.test(ack.string()) ? "stored" : `answered ${ack.string()}`))
              .catch((error: Error) =>
                /Permissions Violation|no responders/i.test(`${error.message} ${String(error.cause)}`)
                  ? "refused"
                  : error.message,
              );
            if (outcome === "stored") stored += 1;
            if ((outcome === "stored") !== allowed || (!allowed && outcome !== "refused")) {
              wrong.push(
                `${identityName(identity)} ${local}: ${outcome}, expected ${allowed ? "stored" : "refused"}`,
              );
            }
          }
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(stored).toBeGreaterThan(10);
  }, 60_000);

  it("lets no identity but the provisioner change a stream or bucket (RePublish, subjects, sources)", async () => {
    const attempts: string[] = [];
    for (const stream of assetStreams(bus.subjects)) {
      const before = (await bus.adminJsm.streams.info(stream)).config;
      const changed = {
        ...before,
        subjects: [...(before.subjects ?? []), `${bus.subjects.prefix}.connector.>`],
        republish: { src: ">", dest: `${bus.subjects.prefix}.connector.alpha.call` },
      };
      for (const identity of bus.identities.filter((i) => i.role !== "provisioner")) {
        const nc = await bus.as(identity);
        for (const api of [bus.apiOf(identity), JS_API]) {
          const outcome = await tryApi(nc, `${api}.STREAM.UPDATE.${stream}`, JSON.stringify(changed));
          if (outcome !== "refused") attempts.push(`${identityName(identity)} changed ${stream}: ${outcome}`);
          const created = await tryApi(
            nc,
            `${api}.STREAM.CREATE.CAPTURE_${stream}`,
            JSON.stringify({ name: `CAPTURE_${stream}`, subjects: [`${bus.subjects.prefix}.connector.>`] }),
          );
          if (created !== "refused") attempts.push(`${identityName(identity)} created a stream: ${created}`);
        }
      }
      const after = (await bus.adminJsm.streams.info(stream)).config;
      expect({ subjects: after.subjects, republish: after.republish }).toEqual({
        subjects: before.subjects,
        republish: before.republish,
      });
    }
    expect(attempts).toEqual([]);
    // The provisioner may: it is the one that made them.
    const provisioner = await bus.as(identityOf("provisioner"));
    const stream = bus.subjects.streams.events.name;
    expect(await tryApi(provisioner, `${JS_API}.STREAM.INFO.${stream}`, "")).toBe("answered");
  }, 120_000);

  it("delivers every subject of the contract from exactly its senders to exactly its receivers", async () => {
    const flows = contractFlows(bus);
    const listening = await Promise.all(flows.map((flow) => listenAll(bus, flow.subject)));
    for (const flow of flows) {
      for (const identity of bus.identities) {
        try {
          (await bus.as(identity)).publish(flow.subject, identityName(identity));
        } catch {
          // Refused by the client at once: nothing sent, as nothing may be.
        }
      }
    }
    await Promise.all(
      bus.identities.map(async (identity) => (await bus.as(identity)).flush().catch(() => undefined)),
    );
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const wrong: string[] = [];
    flows.forEach((flow, index) => {
      const { received, stop } = listening[index] as Awaited<ReturnType<typeof listenAll>>;
      stop();
      const senders = [...new Set(flow.senders.map(identityName))].sort();
      const receivers = new Set(flow.receivers.map(identityName));
      for (const identity of bus.identities) {
        const name = identityName(identity);
        // A receiver hears every allowed sender (and itself, in its own account); anyone else hears
        // nobody. A subject that may name a principal reaches its owner tagged with the sender.
        const tagged = unprefixed(bus, flow.subject) in PRINCIPAL_FIELDS;
        const heard = [...(received.get(name) ?? [])].filter((from) => from !== name).sort();
        const expected = receivers.has(name)
          ? senders.filter((from) => from !== name).map((from) => (tagged ? `${from} via ${from}` : from))
          : [];
        if (JSON.stringify(heard) !== JSON.stringify(expected)) {
          wrong.push(
            `${flow.subject} at ${name}: heard ${JSON.stringify(heard)}, expected ${JSON.stringify(expected)}`,
          );
        }
      }
    });
    expect(flows.length).toBeGreaterThan(40);
    expect(wrong).toEqual([]);
  }, 60_000);

  it("lets no identity send a request that may name a principal under another identity's tag", async () => {
    const flows = contractFlows(bus).filter((flow) => unprefixed(bus, flow.subject) in PRINCIPAL_FIELDS);
    const listening = await Promise.all(flows.map((flow) => listenAll(bus, flow.subject)));
    const names = bus.identities.map(identityName);
    for (const flow of flows) {
      for (const identity of bus.identities) {
        const nc = await bus.as(identity);
        // Forged: every tag, its own included (only the import, not the sender, may tag).
        for (const tag of names) {
          try {
            nc.publish(taggedSubject(flow.subject, tag), `${identityName(identity)} as ${tag}`);
          } catch {
            // Refused by the client at once: nothing sent.
          }
        }
      }
    }
    await Promise.all(
      bus.identities.map(async (identity) => (await bus.as(identity)).flush().catch(() => undefined)),
    );
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const heard = flows.flatMap((flow, index) => {
      const { received, stop } = listening[index] as Awaited<ReturnType<typeof listenAll>>;
      stop();
      const owner = identityName(flow.receivers[0] as Identity);
      // The owner's own account is the owner's: what it sends itself proves nothing.
      return [...(received.get(owner) ?? [])]
        .filter((message) => !message.startsWith(`${owner} as `))
        .map((message) => `${flow.subject} at ${owner}: ${message}`);
    });
    expect(flows.map((flow) => unprefixed(bus, flow.subject)).sort()).toEqual(
      Object.keys(PRINCIPAL_FIELDS).sort(),
    );
    expect(heard).toEqual([]);
  });

  it("keeps a reply with whoever asked: no other identity hears it", async () => {
    const gateway = identityOf("gateway");
    const dispatcher = await bus.as(identityOf("dispatcher"));
    // The gateway's calls reach the dispatcher tagged with who sent them.
    const served = dispatcher.subscribe(taggedSubject(bus.subjects.dispatchCall, "gateway"), {
      callback: (_e, msg) => {
        msg.respond("the reply");
      },
    });
    await dispatcher.flush();
    const overhear = await listenAll(bus, `_INBOX_${bus.subjects.prefix}_gateway.>`);
    const reply = await (await bus.as(gateway)).request(bus.subjects.dispatchCall, "{}", { timeout: 3_000 });
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    overhear.stop();
    served.unsubscribe();
    expect(reply.string()).toBe("the reply");
    const heardBy = [...overhear.received]
      .filter(([name, got]) => name !== "gateway" && got.size > 0)
      .map(([name]) => name);
    expect(heardBy).toEqual([]);
  });

  it("lets no identity have NATS publish into a stream it may not write: reply subjects and deliver subjects", async () => {
    const probes = assetProbes(bus);
    // Responders to every request subject, answering any request: a reply is what a deputy would copy.
    const flows = contractFlows(bus);
    const responders: Subscription[] = [];
    for (const flow of flows.filter((f) => f.row.kind === "req/reply")) {
      const owner = await bus.as(flow.receivers[0] as Identity);
      responders.push(
        owner.subscribe(flow.subject, {
          callback: (_e, msg) => {
            msg.respond('{"mode":"never_ask"}');
          },
        }),
      );
    }
    const counts = async () =>
      new Map(
        await Promise.all(
          assetStreams(bus.subjects).map(
            async (s) => [s, (await bus.adminJsm.streams.info(s)).state.messages] as const,
          ),
        ),
      );
    const escaped: string[] = [];
    for (const identity of bus.identities.filter((i) => i.role !== "provisioner")) {
      const nc = await bus.as(identity);
      const use = identityUse(identity, bus.subjects);
      const api = bus.apiOf(identity);
      // What it may write itself is not a deputy's doing: each target is a stream it may not write.
      const targets = [...probes].filter(([stream]) => !writes(identity, stream, bus));
      // First, what it may write holds a value of its choosing, which a direct get copies byte for byte.
      for (const subject of use.kvWrites) {
        await nc
          .request(
            `${api}.${subject.replace(">", "forged").replace("*", "forged")}`,
            '{"mode":"never_ask"}',
            { timeout: 3_000 },
          )
          .catch(() => undefined);
      }
      // The same requests with a reply it can hear are answered: the attempts below are real ones.
      const control = `${inboxPrefix(bus.subjects.prefix, identity)}.control`;
      let answered = 0;
      const heard = nc.subscribe(control, {
        callback: () => {
          answered += 1;
        },
      });
      for (const pattern of use.jetStreamApi.filter(
        (p) => p.includes(".DIRECT.GET.") || p.includes(".STREAM.INFO."),
      )) {
        nc.publish(
          `${api}${pattern.slice(JS_API.length)}`.replace(">", "forged").replaceAll("*", "forged"),
          "",
          { reply: control },
        );
      }
      await nc.flush();
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      heard.unsubscribe();
      if (use.jetStreamApi.length > 0 && answered === 0)
        escaped.push(`${identityName(identity)}: no control request was answered`);
      const before = await counts();
      for (const [, target] of targets) {
        for (const reply of [target.captured, `${api}.${target.captured}`]) {
          for (const pattern of use.jetStreamApi) {
            const local = `${api}${pattern.slice(JS_API.length)}`
              .replace(">", "forged")
              .replaceAll("*", "forged");
            if (
              local.includes(".DIRECT.GET.") ||
              local.includes(".STREAM.INFO.") ||
              local.includes(".CONSUMER.INFO.")
            ) {
              nc.publish(local, "", { reply });
            }
            if (local.includes(".CONSUMER.CREATE.")) {
              const stream = local.split(".")[5] ?? "";
              const filter = local.split(".").slice(7).join(".");
              nc.publish(
                local,
                JSON.stringify({
                  stream_name: stream,
                  config: {
                    name: "forged",
                    deliver_subject: reply,
                    filter_subject: filter,
                    ack_policy: "none",
                    deliver_policy: "all",
                  },
                }),
              );
            }
          }
          for (const flow of flows.filter(
            (f) =>
              f.row.kind === "req/reply" && f.senders.some((x) => identityName(x) === identityName(identity)),
          )) {
            nc.publish(flow.subject, "{}", { reply });
          }
        }
      }
      await nc.flush();
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      const after = await counts();
      for (const [stream] of targets) {
        if (after.get(stream) !== before.get(stream)) {
          escaped.push(
            `${identityName(identity)} put ${(after.get(stream) ?? 0) - (before.get(stream) ?? 0)} message(s) into ${stream}`,
          );
        }
      }
    }
    for (const responder of responders) responder.unsubscribe();
    expect(escaped).toEqual([]);
  }, 120_000);
});

/** Whether `identity` may write into `stream` itself (a KV write, or a publish the stream takes). */
function writes(identity: Identity, stream: string, bus: EnforcingBus): boolean {
  const use = identityUse(identity, bus.subjects);
  if (use.kvWrites.some((subject) => stream === bucketStream(subject.split(".")[1] ?? ""))) return true;
  const names = Object.values(bus.subjects.streams).find((s) => s.name === stream);
  return (
    names !== undefined &&
    use.publishes.some((p) => p.stored && names.subjects.some((s) => covers(s, p.subject)))
  );
}

describe("the access tables", () => {
  const subjects = createSubjects("toolbus");
  const identities = busIdentities(SERVERS);

  it("give no running identity a stream change, a purge, a delete or an unfiltered read", () => {
    const dangerous: string[] = [];
    for (const identity of identities.filter((i) => i.role !== "provisioner")) {
      for (const subject of identityUse(identity, subjects).jetStreamApi) {
        const rest = subject.slice(`${JS_API}.`.length);
        const bad =
          /^STREAM\.(CREATE|UPDATE|DELETE|PURGE|MSG\.|SNAPSHOT|RESTORE)/.test(rest) ||
          /^CONSUMER\.(DELETE|DURABLE\.CREATE)/.test(rest) ||
          /^DIRECT\.GET\.[^.]+$/.test(rest) ||
          // A consumer is created only under a filter (its subject names it), never unfiltered.
          /^CONSUMER\.CREATE\.[^.]+(\.[^.]+)?$/.test(rest) ||
          /^(ACCOUNT|SERVER|META)\./.test(rest) ||
          rest === "INFO";
        if (bad) dangerous.push(`${identityName(identity)}: ${subject}`);
      }
    }
    expect(dangerous).toEqual([]);
  });

  it("give the provisioner nothing but creating, updating and looking at the assets and the durable consumer", () => {
    const publish = permissionsFor(identityOf("provisioner"), subjects).publish;
    expect(
      publish.filter(
        (s) =>
          !/^\$JS\.API\.(STREAM\.(CREATE|UPDATE|INFO)|CONSUMER\.(CREATE|INFO)\.TOOLBUS_MEMORY\.memory)/.test(
            s,
          ),
      ),
    ).toEqual([]);
  });

  it("let a connector touch only its own server: its subjects, its catalog key, its records", () => {
    const alpha = identityOf("connector", "alpha");
    const { publish, subscribe } = permissionsFor(alpha, subjects);
    const foreign = [...publish, ...subscribe].filter(
      (s) => /\bbeta\b/.test(s) || /connector\.\*|server\.\*|\.\*\.call$/.test(s),
    );
    expect(foreign).toEqual([]);
    expect(publish).toContain("$TOOLBUS.JS.API.$KV.toolbus_catalog.server.alpha");
    expect(publish.filter((s) => s.includes("approvals"))).toEqual([]);
  });
});
