/**
 * A nats-server that enforces the accounts `toolbus nats-config` generates, provisioned by the
 * provisioner's identity, with one raw connection per identity (and an admin in the JetStream
 * account, outside the generated layout, to look at what the streams hold).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type JetStreamManager, jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection, nkeyAuthenticator } from "@nats-io/transport-node";
import { provisionBus, readSeedFile, writeNatsIdentities } from "@toolbus/bus";
import { DEFAULT_BUS_CONFIG, DEFAULT_MEMORY_CONFIG, provisionInputs } from "@toolbus/config";
import {
  createSubjects,
  type Identity,
  identityName,
  inboxPrefix,
  LOCAL_JS_API,
  type Subjects,
} from "@toolbus/protocol";
import { type NatsServerProcess, startNatsServer } from "@toolbus/testkit";

export interface EnforcingBus {
  server: NatsServerProcess;
  subjects: Subjects;
  identities: readonly Identity[];
  /** A raw connection as `identity`, with its own inbox prefix (opened once, closed by `stop`). */
  as(identity: Identity): Promise<NatsConnection>;
  /** The JetStream API prefix `identity` uses. */
  apiOf(identity: Identity): string;
  /** Outside the layout: may look at and change anything in the JetStream account. */
  admin: NatsConnection;
  adminJsm: JetStreamManager;
  stop(): Promise<void>;
}

const ADMIN = { user: "matrix-admin", password: "matrix-admin-password" };
const USERS_LINE = "    users: [\n";

export async function startEnforcingBus(options: {
  binary: string;
  servers: readonly string[];
  prefix?: string;
}): Promise<EnforcingBus> {
  const prefix = options.prefix ?? "toolbus";
  const subjects = createSubjects(prefix);
  const dir = mkdtempSync(join(tmpdir(), "toolbus-matrix-"));
  const written = writeNatsIdentities({ dir, prefix, servers: options.servers });
  // The JetStream account's users come first in the generated block: the admin joins them.
  const auth = readFileSync(written.authConf, "utf8").replace(
    USERS_LINE,
    `${USERS_LINE}      { user: ${JSON.stringify(ADMIN.user)}, password: ${JSON.stringify(ADMIN.password)} }\n`,
  );
  const server = await startNatsServer({ binary: options.binary, config: auth });
  const seed = (identity: Identity) => readSeedFile(written.seedFile(identity));
  const apiOf = (identity: Identity) => (identity.role === "provisioner" ? "$JS.API" : LOCAL_JS_API);
  const provisioner = written.identities.find((i) => i.role === "provisioner") as Identity;
  await provisionBus({
    access: {
      servers: [server.url],
      nkeySeed: seed(provisioner),
      inboxPrefix: inboxPrefix(prefix, provisioner),
    },
    subjects,
    settings: {
      ...provisionInputs({ bus: DEFAULT_BUS_CONFIG, memory: DEFAULT_MEMORY_CONFIG }, {}),
      replicas: 1,
    },
  });
  const admin = await connect({ servers: server.url, user: ADMIN.user, pass: ADMIN.password });
  const opened = new Map<string, Promise<NatsConnection>>();
  return {
    server,
    subjects,
    identities: written.identities,
    apiOf,
    admin,
    adminJsm: await jetstreamManager(admin, { checkAPI: false }),
    as(identity) {
      const name = identityName(identity);
      let nc = opened.get(name);
      if (!nc) {
        nc = connect({
          servers: server.url,
          authenticator: nkeyAuthenticator(new TextEncoder().encode(seed(identity))),
          inboxPrefix: inboxPrefix(prefix, identity),
          reconnect: false,
        });
        opened.set(name, nc);
      }
      return nc;
    },
    async stop() {
      for (const nc of opened.values()) await (await nc).close().catch(() => undefined);
      await admin.close();
      await server.stop();
    },
  };
}
