// How a process finds its NATS identity in its environment, and what it is told when that is wrong.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { busLayout, createSubjects, identityName, identityOf, LOCAL_JS_API } from "@toolbus/protocol";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../src/config.js";
import { renderAuthConf } from "../src/core/nats-auth-conf.js";
import {
  generateNatsIdentities,
  hasCredentials,
  natsAccessFromEnv,
  runningLocalNats,
  writeNatsIdentities,
} from "../src/nats-identity.js";

const identity = { prefix: "toolbus", role: "dispatcher" } as const;
const dir = mkdtempSync(join(tmpdir(), "toolbus-identity-"));
const ids = writeNatsIdentities({ dir: join(dir, "ids"), prefix: "toolbus", servers: ["github", "linear"] });

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    natsAccessFromEnv(env, identity);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe("natsAccessFromEnv", () => {
  it("reads a seed file, gives the role its own inbox prefix, and reaches JetStream through its account", () => {
    const access = natsAccessFromEnv(
      { NATS_URL: "nats://a:4222, nats://b:4222", NATS_NKEY_FILE: ids.seedFile("dispatcher") },
      identity,
    );
    expect(access).toEqual({
      servers: ["nats://a:4222", "nats://b:4222"],
      nkeySeed: expect.stringMatching(/^SU[A-Z2-7]+$/),
      inboxPrefix: "_INBOX_toolbus_dispatcher",
      identity: "dispatcher",
      credentialSource: `NATS_NKEY_FILE=${ids.seedFile("dispatcher")}`,
      jsApiPrefix: LOCAL_JS_API,
    });
    expect(hasCredentials(access)).toBe(true);
  });

  it("finds a connector's seed beside the catalog's, or in NATS_NKEY_DIR", () => {
    const connector = { prefix: "toolbus", identity: identityOf("connector", "github") } as const;
    const file = ids.seedFile(identityOf("connector", "github"));
    expect(file).toBe(join(dir, "ids", "connector-github.nk"));
    for (const env of [{ NATS_NKEY_FILE: ids.seedFile("catalog") }, { NATS_NKEY_DIR: join(dir, "ids") }]) {
      const access = natsAccessFromEnv(env, connector);
      expect(access).toEqual({
        servers: ["nats://127.0.0.1:4222"],
        nkeySeed: readFileSync(file, "utf8").trim(),
        inboxPrefix: "_INBOX_toolbus_connector_github",
        identity: "connector-github",
        credentialSource: `seed file ${file}`,
        jsApiPrefix: LOCAL_JS_API,
      });
    }
    // A server whose identity was never written is named, with its file.
    const missing = join(dir, "ids", "connector-jira.nk");
    expect(() =>
      natsAccessFromEnv(
        { NATS_NKEY_DIR: join(dir, "ids") },
        { prefix: "toolbus", identity: identityOf("connector", "jira") },
      ),
    ).toThrow(missing);
  });

  it("lets the provisioner use JetStream's own API, where the streams are", () => {
    const access = natsAccessFromEnv(
      { NATS_NKEY_FILE: ids.seedFile("provisioner") },
      { prefix: "toolbus", role: "provisioner" },
    );
    expect({ source: access.credentialSource, api: access.jsApiPrefix }).toEqual({
      source: `NATS_NKEY_FILE=${ids.seedFile("provisioner")}`,
      api: undefined,
    });
  });

  it("without anything, is the local default with no credentials", () => {
    const access = natsAccessFromEnv({}, identity);
    expect(access).toEqual({
      servers: ["nats://127.0.0.1:4222"],
      inboxPrefix: "_INBOX_toolbus_dispatcher",
      identity: "dispatcher",
    });
    expect(hasCredentials(access)).toBe(false);
    expect(hasCredentials({ servers: ["nats://u:p@127.0.0.1:4222"] })).toBe(true);
  });

  it("names every problem at once, with what to do", () => {
    const notASeed = join(dir, "not-a-seed.nk");
    writeFileSync(notASeed, "hello\n");
    expect(problemsOf({ NATS_NKEY_FILE: notASeed, NATS_USER: "svc", NATS_TLS_CERT_FILE: notASeed })).toEqual([
      `NATS_NKEY_FILE=${notASeed}: is not an NKey user seed (one line starting with "SU"); use a file written by \`toolbus nats-config\``,
      "NATS_USER: set together with NATS_NKEY_FILE; use one kind of credentials",
      "NATS_PASSWORD: missing; NATS_USER needs it (NATS_PASSWORD_FILE, a file holding it, keeps it out of the environment)",
      "NATS_TLS_CERT_FILE / NATS_TLS_KEY_FILE: set both (a client certificate needs its key), or neither",
    ]);
    expect(problemsOf({ NATS_URL: "nats://a:4222,::bad url::", NATS_TLS_CA_FILE: "/no/ca.pem" })).toEqual([
      "NATS_URL: ::bad url:: is not a URL; use nats://host:port, or a comma-separated list of them",
      "NATS_TLS_CA_FILE: /no/ca.pem does not exist; give the path of a PEM file",
    ]);
  });

  it("reads the password from NATS_PASSWORD_FILE, so the environment holds only its path", () => {
    const file = join(dir, "nats-password");
    writeFileSync(file, "s3cret\n", { mode: 0o600 });
    expect(natsAccessFromEnv({ NATS_USER: "svc", NATS_PASSWORD_FILE: file }, identity)).toMatchObject({
      user: "svc",
      password: "s3cret",
    });
    expect(problemsOf({ NATS_USER: "svc", NATS_PASSWORD: "a", NATS_PASSWORD_FILE: file })).toEqual([
      "NATS_PASSWORD and NATS_PASSWORD_FILE are both set; keep one (NATS_PASSWORD_FILE, the file, keeps the secret out of the environment)",
    ]);
    expect(problemsOf({ NATS_USER: "svc", NATS_PASSWORD_FILE: join(dir, "none") })).toEqual([
      `NATS_PASSWORD_FILE=${join(dir, "none")}: cannot read it (no such file); point it at a file holding NATS_PASSWORD's value`,
    ]);
  });

  it("reads how many replicas streams and buckets get, refusing what JetStream cannot keep", () => {
    expect(natsAccessFromEnv({ TOOLBUS_JS_REPLICAS: "3" }, identity).jetStreamReplicas).toBe(3);
    expect(natsAccessFromEnv({ TOOLBUS_JS_REPLICAS: "" }, identity).jetStreamReplicas).toBeUndefined();
    const advice = "use 1 on a single nats-server, the cluster's node count (3 or 5) on a cluster";
    for (const bad of ["0", "6", "2.5", "three"]) {
      expect(problemsOf({ TOOLBUS_JS_REPLICAS: bad })).toEqual([
        `TOOLBUS_JS_REPLICAS: "${bad}" is not a whole number from 1 to 5; ${advice}`,
      ]);
    }
  });
});

describe("generateNatsIdentities", () => {
  it("gives every identity of the bus (each role, a connector per server) a seed of its own, and lets in exactly their public keys", () => {
    const generated = generateNatsIdentities({ prefix: "toolbus", servers: ["github", "files"] });
    const names = generated.identities.map(identityName);
    expect(names).toEqual(
      expect.arrayContaining(["catalog", "dispatcher", "cli", "connector-github", "connector-files"]),
    );
    expect([...generated.seeds.keys()]).toEqual(names);
    const seeds = [...generated.seeds.values()];
    expect(new Set(seeds).size).toBe(names.length);
    for (const seed of seeds) expect(seed).toMatch(/^SU[A-Z2-7]{56}$/);
    const keysInConf = [...generated.authConf.matchAll(/nkey: "(U[A-Z2-7]+)"/g)].map((match) => match[1]);
    expect(keysInConf.sort()).toEqual(names.map((name) => generated.publicKeys.get(name)).sort());
    // The config a server reads names public keys only.
    for (const seed of seeds) expect(generated.authConf).not.toContain(seed);
  });

  it("gives new seeds each run", () => {
    const first = generateNatsIdentities({ prefix: "toolbus", servers: [] });
    const second = generateNatsIdentities({ prefix: "toolbus", servers: [] });
    expect([...first.seeds.values()].filter((seed) => [...second.seeds.values()].includes(seed))).toEqual([]);
  });
});

describe("runningLocalNats", () => {
  it("finds nothing when no pnpm start runs for the project, and its URL and the CLI's identity when one does", () => {
    const state = mkdtempSync(join(tmpdir(), "toolbus-running-"));
    expect(runningLocalNats(state)).toBeUndefined();
    mkdirSync(join(state, "nats"));
    writeFileSync(join(state, "nats", "url"), "nats://127.0.0.1:4999\n");
    expect(runningLocalNats(state)).toEqual({
      url: "nats://127.0.0.1:4999",
      identitiesDir: join(state, "nats"),
    });
  });
});

describe("writeNatsIdentities", () => {
  it("writes one seed per identity, a connector's for each configured server", () => {
    expect(ids.identities.map((id) => ids.seedFile(id)).filter((file) => !existsSync(file))).toEqual([]);
    expect([...ids.publicKeys.keys()]).toEqual([
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
    expect(new Set(ids.publicKeys.values()).size).toBe(ids.publicKeys.size);
  });

  it("keeps existing seeds when written again, unless asked to rotate", () => {
    const again = writeNatsIdentities({ dir: ids.dir, prefix: "toolbus", servers: ["github", "linear"] });
    expect(again.publicKeys).toEqual(ids.publicKeys);
    const rotated = writeNatsIdentities({
      dir: join(dir, "rotated"),
      prefix: "toolbus",
      servers: ["github"],
    });
    const rotatedAgain = writeNatsIdentities({
      dir: rotated.dir,
      prefix: "toolbus",
      servers: ["github"],
      rotate: true,
    });
    expect(rotatedAgain.publicKeys.get("dispatcher")).not.toBe(rotated.publicKeys.get("dispatcher"));
  });
});

describe("renderAuthConf", () => {
  it("gives each identity an account of its own, quotes every subject and lists public keys only", () => {
    const layout = busLayout(createSubjects("toolbus"), ["github"]);
    const conf = renderAuthConf(layout, (id) => `U_${id.role}${id.server ? `_${id.server}` : ""}`);
    const accounts = [...conf.matchAll(/^ {2}"([^"]+)": \{$/gm)].map(([, name]) => name);
    expect(accounts).toEqual([
      "TOOLBUS",
      "toolbus.catalog",
      "toolbus.dispatcher",
      "toolbus.approvals",
      "toolbus.memory",
      "toolbus.gateway",
      "toolbus.cli",
      "toolbus.agent",
      "toolbus.connector-github",
    ]);
    // Only the account that holds the streams has JetStream; the provisioner lives there.
    expect(conf.match(/jetstream: enabled/g)).toHaveLength(1);
    expect(conf).toContain('nkey: "U_provisioner"');
    expect(conf).toContain('nkey: "U_connector_github"');
    expect(conf).toContain('"$TOOLBUS.JS.API.STREAM.INFO.TOOLBUS_EVENTS"');
    expect(conf).toContain('"toolbus.connector.*.call"');
    expect(conf).toContain("allow_responses: true");
    expect(conf).not.toMatch(/[^"]\$(JS|TOOLBUS)\./);
    expect(conf).not.toMatch(/SU[A-Z2-7]{20,}/);
  });

  it("is what writeNatsIdentities writes, with the written keys", () => {
    const written = readFileSync(ids.authConf, "utf8");
    for (const [name, key] of ids.publicKeys) expect(written, name).toContain(`nkey: "${key}"`);
    expect(written).toContain('"toolbus.connector-linear": {');
  });
});
