/**
 * The NATS accounts of an authenticated toolbus bus, derived from the tables of access.ts: one
 * account per identity, and one that holds every JetStream asset (and the provisioner).
 *
 * Why accounts, not only allow lists: within one account, any client may make NATS publish on
 * its behalf to a subject it may not publish itself — the reply subject of a JetStream API
 * request (a direct get answers with the stored message, byte for byte), of a request to a
 * service (which may answer each request once), or a push consumer's deliver subject. A
 * gateway that wrote a value into its own bucket could then have it stored as the approval
 * policy. Across accounts only what is exported and imported crosses, so each account can reach
 * exactly the subjects the tables give its identity, whoever publishes them on its behalf.
 *
 * - A request/reply subject: its owner's account exports it as a service to its users' accounts.
 * - An event: its owner's account exports it as a stream to its subscribers' accounts; one that
 *   is stored is also imported as a service from the JetStream account, where its stream takes it.
 * - JetStream: the JetStream account exports each API subject, KV write subject and reply
 *   subject an identity uses to that identity's account, which imports it under
 *   `LOCAL_JS_API` (an account without JetStream answers `$JS.API.>` itself); the deliveries of
 *   its consumers come back as a stream export of its own inbox prefix.
 */
import {
  busIdentities,
  covers,
  type Identity,
  INTERNAL_SUBJECTS,
  identityName,
  identityOf,
  identityUse,
  inboxPrefix,
  localJetStreamApi,
  localKvWrite,
  type Permissions,
  permissionsFor,
  withPrefix,
} from "./access.js";
import { PRINCIPAL_FIELDS, taggedSubject } from "./principal-authority.js";
import { type Role, SUBJECTS, type Subjects } from "./subjects.js";

/** The account holding every stream and bucket (the name toolbus has always used). */
export const JETSTREAM_ACCOUNT = "TOOLBUS";

/** The account of one identity under a prefix: `toolbus.dispatcher`, `toolbus.connector-github`. */
export function accountName(prefix: string, identity: Identity): string {
  return identity.role === "provisioner" ? JETSTREAM_ACCOUNT : `${prefix}.${identityName(identity)}`;
}

export interface AccountExport {
  readonly kind: "service" | "stream";
  readonly subject: string;
  readonly accounts: readonly string[];
  /** `stream` for a service that answers one request with several messages (a pull). */
  readonly responseType?: "stream";
}

export interface AccountImport {
  readonly kind: "service" | "stream";
  readonly account: string;
  readonly subject: string;
  /** The subject in the importing account, when it differs. */
  readonly to?: string;
}

export interface AccountUser {
  readonly identity: Identity;
  readonly permissions: Permissions;
}

export interface AccountSpec {
  readonly name: string;
  readonly jetstream: boolean;
  readonly users: readonly AccountUser[];
  readonly exports: readonly AccountExport[];
  readonly imports: readonly AccountImport[];
}

export interface BusLayout {
  readonly prefix: string;
  readonly identities: readonly Identity[];
  readonly accounts: readonly AccountSpec[];
}

interface Flow {
  readonly kind: "service" | "stream";
  readonly subject: string;
  readonly from: string;
  readonly to: string;
  /** The subject in the importing account, when it differs. */
  readonly local?: string;
  readonly responseType?: "stream";
}

/** The accounts of a bus whose config has `servers`, under `subjects`' prefix. */
export function busLayout(subjects: Subjects, servers: readonly string[]): BusLayout {
  const prefix = subjects.prefix;
  const identities = busIdentities(servers);
  const account = (identity: Identity) => accountName(prefix, identity);
  const flows: Flow[] = [];
  const flow = (f: Flow) => {
    if (f.from !== f.to) flows.push(f);
  };

  // Between identities: the subject tables, made concrete for each server.
  for (const row of [...SUBJECTS, ...INTERNAL_SUBJECTS]) {
    // A subject naming `<server>` is one subject per server; one a connector uses without naming
    // it (`events.catalog`) is the same subject for every server's connector.
    const perServer = row.subject.includes("<server>") || [row.owner, ...row.users].includes("connector");
    for (const server of perServer ? servers : [undefined]) {
      const who = (role: Role) => identityOf(role, role === "connector" ? server : undefined);
      const subject = withPrefix(row.subject, prefix, server);
      const owner = account(who(row.owner));
      const users = row.users.map((role) => account(who(role)));
      if (row.kind === "req/reply") {
        const tagged = row.subject in PRINCIPAL_FIELDS;
        for (const role of row.users) {
          const user = who(role);
          // Tagged with its sender (principal-authority.ts): the owner knows who asked.
          flow(
            tagged
              ? {
                  kind: "service",
                  subject: taggedSubject(subject, identityName(user)),
                  from: owner,
                  to: account(user),
                  local: subject,
                }
              : { kind: "service", subject, from: owner, to: account(user) },
          );
        }
      } else if (row.subject === "toolbus.memory.message") {
        for (const user of users) flow({ kind: "service", subject, from: JETSTREAM_ACCOUNT, to: user });
      } else {
        for (const user of users) flow({ kind: "stream", subject, from: owner, to: user });
        if (row.kind === "stream") flow({ kind: "service", subject, from: JETSTREAM_ACCOUNT, to: owner });
      }
    }
  }

  // JetStream, and the pings of record owners.
  for (const identity of identities) {
    if (identity.role === "provisioner") continue;
    const here = account(identity);
    const use = identityUse(identity, subjects);
    for (const subject of use.jetStreamApi) {
      const pull = subject.includes(".CONSUMER.MSG.NEXT.");
      flow({
        kind: "service",
        subject,
        from: JETSTREAM_ACCOUNT,
        to: here,
        local: localJetStreamApi(subject),
        ...(pull ? { responseType: "stream" as const } : {}),
      });
    }
    for (const subject of use.kvWrites) {
      flow({ kind: "service", subject, from: JETSTREAM_ACCOUNT, to: here, local: localKvWrite(subject) });
    }
    for (const subject of use.jetStreamReplies)
      flow({ kind: "service", subject, from: JETSTREAM_ACCOUNT, to: here });
    for (const { subject, stored } of use.publishes) {
      // Stored subjects the tables do not name (the large replies) come straight from JetStream.
      if (stored && !flows.some((f) => f.to === here && f.kind === "service" && f.subject === subject)) {
        flow({ kind: "service", subject, from: JETSTREAM_ACCOUNT, to: here });
      }
    }
    if (use.receivesDeliveries) {
      flow({
        kind: "stream",
        subject: `${inboxPrefix(prefix, identity)}.>`,
        from: JETSTREAM_ACCOUNT,
        to: here,
      });
    }
    for (const ping of use.pings) {
      const owners = identities.filter((other) => other.role === ping.ownerRole);
      for (const owner of owners) {
        const subject = `$SRV.PING.${identityName(owner)}.*`;
        if (covers(ping.subject, subject)) flow({ kind: "service", subject, from: account(owner), to: here });
      }
    }
  }

  const accounts = [JETSTREAM_ACCOUNT, ...identities.filter((i) => i.role !== "provisioner").map(account)];
  const specs = accounts.map((name): AccountSpec => {
    const exported = new Map<
      string,
      { kind: Flow["kind"]; subject: string; accounts: Set<string>; responseType?: "stream" }
    >();
    for (const f of flows.filter((f) => f.from === name)) {
      const key = `${f.kind} ${f.subject}`;
      const entry = exported.get(key) ?? { kind: f.kind, subject: f.subject, accounts: new Set<string>() };
      entry.accounts.add(f.to);
      if (f.responseType) entry.responseType = f.responseType;
      exported.set(key, entry);
    }
    const users = identities
      .filter((identity) => account(identity) === name)
      .map((identity) => Object.freeze({ identity, permissions: permissionsFor(identity, subjects) }));
    return Object.freeze({
      name,
      jetstream: name === JETSTREAM_ACCOUNT,
      users: Object.freeze(users),
      exports: Object.freeze(
        [...exported.values()]
          .sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : a.kind < b.kind ? -1 : 1))
          .map((e) =>
            Object.freeze({
              kind: e.kind,
              subject: e.subject,
              accounts: Object.freeze([...e.accounts].sort()),
              ...(e.responseType ? { responseType: e.responseType } : {}),
            }),
          ),
      ),
      imports: Object.freeze(
        flows
          .filter((f) => f.to === name)
          .map((f) =>
            Object.freeze({
              kind: f.kind,
              account: f.from,
              subject: f.subject,
              ...(f.local !== undefined && f.local !== f.subject ? { to: f.local } : {}),
            }),
          )
          .sort((a, b) =>
            a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : a.account < b.account ? -1 : 1,
          ),
      ),
    });
  });
  return Object.freeze({ prefix, identities: Object.freeze(identities), accounts: Object.freeze(specs) });
}
