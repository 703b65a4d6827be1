/** docker-compose.yml, checked as `docker compose config` would and against the services it runs. */
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { seedFileOf } from "@toolbus/bus";
import { parseToolbusToml } from "@toolbus/config";
import { identityOf } from "@toolbus/protocol";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { natsConf } from "./nats-conf.js";
import {
  compiledMain,
  existsInRepo,
  flagValue,
  provisionFlags,
  readRepoFile,
  repoPath,
  serviceNames,
} from "./repo.js";

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  ports?: (string | { target: number; published?: string | number; host_ip?: string })[];
  volumes?: (string | LongVolume)[];
  healthcheck?: { test?: string[]; disable?: boolean };
  restart?: string;
  depends_on?: Record<string, { condition: string; required?: boolean }>;
  secrets?: (string | { source: string; target?: string })[];
  profiles?: string[];
  entrypoint?: string[];
}
interface LongVolume {
  type: string;
  source: string;
  target: string;
  read_only?: boolean;
  bind?: { create_host_path?: boolean };
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, { file?: string; environment?: string }>;
}

// `merge: true`: the file shares settings through YAML merge keys (`<<: *anchor`), as compose reads them.
const compose = parse(readRepoFile("docker-compose.yml"), { merge: true }) as ComposeFile;
const services = serviceNames();
const CLUSTER = ["nats-1", "nats-2", "nats-3"];
const INFRA = ["nats", ...CLUSTER, "postgres", "jaeger"];
/** The one-shot that provisions the bus before any service starts. */
const PROVISION = "provision";
/** Where the operator writes the NATS identities (`toolbus nats-config --out deploy/nats-auth`). */
const NATS_AUTH = "deploy/nats-auth";
const WITH_DATABASE = ["approvals", "memory"];
const HTTP_PORTS: Record<string, number> = { gateway: 8080, approvals: 8081 };

function service(name: string): ComposeService {
  const found = compose.services[name];
  if (found === undefined) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
}

interface Published {
  hostIp: string | undefined;
  published: number;
  target: number;
}

/** Short (`[ip:]host:container`) and long port syntax. */
function publishedPorts(entry: ComposeService): Published[] {
  return (entry.ports ?? []).map((port) => {
    if (typeof port !== "string") {
      return { hostIp: port.host_ip, published: Number(port.published ?? port.target), target: port.target };
    }
    const parts = port.split(":");
    const target = Number(parts.at(-1));
    const published = parts.length >= 2 ? Number(parts.at(-2)) : target;
    return { hostIp: parts.length === 3 ? parts[0] : undefined, published, target };
  });
}

/** Short (`source:target[:ro]`) and long volume syntax. */
function mountsOf(entry: ComposeService): { source: string; target: string; readOnly: boolean }[] {
  return (entry.volumes ?? []).map((volume) => {
    if (typeof volume !== "string") {
      return { source: volume.source, target: volume.target, readOnly: volume.read_only === true };
    }
    const [source = "", target = "", mode = ""] = volume.split(":");
    return { source, target, readOnly: mode.split(",").includes("ro") };
  });
}

/** `${NAME:-default}` and `${NAME:?message}` as compose reads them, with `env` as the shell's environment. */
function interpolate(value: string, env: Record<string, string> = {}): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_match, name: string, kind, rest: string) => {
    const set = env[name];
    if (set !== undefined && set !== "") return set;
    if (kind === "-") return rest;
    throw new Error(`${name} is required: ${rest}`);
  });
}

/** The secrets a service gets, as `{ name, path }`: compose mounts each at /run/secrets/<target or name>. */
function secretsOf(entry: ComposeService): { name: string; path: string }[] {
  return (entry.secrets ?? []).map((secret) => {
    const name = typeof secret === "string" ? secret : secret.source;
    const target = typeof secret === "string" ? name : (secret.target ?? name);
    return { name, path: target.startsWith("/") ? target : `/run/secrets/${target}` };
  });
}

/** The repository file a top-level secret reads. */
function secretFile(name: string): string | undefined {
  return compose.secrets?.[name]?.file?.replace(/^\.\//, "");
}

const exampleToml = readRepoFile("deploy/toolbus.example.toml");
/** The MCP servers of the config compose mounts: each has a connector identity of its own. */
const configServers = Object.keys(
  parseToolbusToml(exampleToml, { path: "deploy/toolbus.example.toml" }).mcpServers,
).sort();

/** The containers running the catalog, with the servers each runs and whether it serves `catalog.*`. */
function catalogContainers(): { name: string; servers: string[]; front: boolean }[] {
  return Object.entries(compose.services)
    .filter(([, entry]) => compiledMain(entry.command?.[0])?.service === "catalog")
    .map(([name, entry]) => {
      const args = entry.command ?? [];
      const servers = flagValue(args, "--servers")?.split(",") ?? configServers;
      return { name, servers, front: !args.includes("--connectors-only") };
    });
}

/** The seed file of an identity in the folder nats-config writes (`connector-<server>.nk` for a server's connector). */
const seed = (role: "provisioner" | "catalog" | string, server?: string) =>
  seedFileOf(NATS_AUTH, server === undefined ? (role as never) : identityOf("connector", server));

describe("docker-compose.yml", () => {
  it("lists exactly the infrastructure, the provisioning one-shot and one container per service", () => {
    expect(Object.keys(compose.services).sort()).toEqual([...INFRA, PROVISION, ...services].sort());
  });

  it("runs NATS from the committed config, with its JetStream store on a named volume and its monitoring port for the health check", () => {
    const nats = service("nats");
    expect(nats.image).toBe("nats:2.10-alpine");
    const configPath = flagValue(nats.command ?? [], "--config");
    expect(mountsOf(nats)).toContainEqual({
      source: "./deploy/nats/nats.conf",
      target: configPath,
      readOnly: true,
    });
    const config = natsConf("deploy/nats/nats.conf");
    expect(mountsOf(nats)).toContainEqual({ source: "nats-data", target: config.storeDir, readOnly: false });
    expect(config.monitorPort).toBe(8222);
    expect(nats.healthcheck?.test?.join(" ")).toContain("http://127.0.0.1:8222/healthz");
  });

  it.each(["nats", ...CLUSTER])(
    "mounts the auth.conf of toolbus nats-config read-only beside the config %s includes it from, never creating it",
    (name) => {
      const entry = service(name);
      const configDir =
        name === "nats" ? dirname(flagValue(entry.command ?? [], "--config") ?? "") : "/etc/nats";
      const included = natsConf("deploy/nats/nats.conf").includes;
      expect(included).toEqual(["auth.conf"]);
      expect(mountsOf(entry)).toContainEqual({
        source: `./${NATS_AUTH}/auth.conf`,
        target: `${configDir}/auth.conf`,
        readOnly: true,
      });
      // Missing (nats-config not run), compose stops rather than create a folder named auth.conf.
      const long = (entry.volumes ?? []).find(
        (volume): volume is LongVolume =>
          typeof volume !== "string" && volume.source === `./${NATS_AUTH}/auth.conf`,
      );
      expect(long?.bind?.create_host_path).toBe(false);
    },
  );

  it("runs Postgres on a named volume, checked with pg_isready", () => {
    const postgres = service("postgres");
    expect(postgres.image).toBe("postgres:15-alpine");
    expect(mountsOf(postgres)).toContainEqual({
      source: "postgres-data",
      target: "/var/lib/postgresql/data",
      readOnly: false,
    });
    expect(postgres.healthcheck?.test?.join(" ")).toContain("pg_isready");
  });

  it("runs Jaeger with its OTLP receiver on and its UI on 16686", () => {
    const jaeger = service("jaeger");
    expect(jaeger.image).toMatch(/^jaegertracing\/all-in-one:\d+\.\d+\.\d+$/);
    expect(jaeger.environment?.COLLECTOR_OTLP_ENABLED).toBe("true");
    expect(publishedPorts(jaeger)).toContainEqual({ hostIp: "127.0.0.1", published: 16686, target: 16686 });
  });

  it.each(services)("builds %s from the one Dockerfile", (name) => {
    const { build, image } = service(name);
    expect({ build, image }).toEqual({
      build: { context: ".", dockerfile: "Dockerfile" },
      image: "toolbus:local",
    });
  });

  it.each(services)("starts %s from the compiled main of that service, whose source exists", (name) => {
    const main = compiledMain(service(name).command?.[0]);
    expect(main?.service).toBe(name);
    expect(existsInRepo(main!.source)).toBe(true);
  });

  it("publishes every port on 127.0.0.1 only", () => {
    const exposed = Object.entries(compose.services).flatMap(([name, entry]) =>
      publishedPorts(entry).map((port) => ({ name, ...port })),
    );
    expect(exposed.filter((port) => port.hostIp !== "127.0.0.1")).toEqual([]);
    expect(exposed.length).toBeGreaterThan(0);
  });

  it.each(Object.entries(HTTP_PORTS))("publishes %s's HTTP port %i and checks its /healthz", (name, port) => {
    const entry = service(name);
    expect(publishedPorts(entry)).toContainEqual({ hostIp: "127.0.0.1", published: port, target: port });
    expect(entry.healthcheck?.test).toEqual([
      "CMD",
      "node",
      "deploy/probes/http-ok.mjs",
      `http://127.0.0.1:${port}/healthz`,
    ]);
  });

  it("checks the services without HTTP through their NATS connection, with a probe that exists", () => {
    const checks = services
      .filter((name) => !(name in HTTP_PORTS))
      .map((name) => ({ name, test: service(name).healthcheck?.test }));
    expect(checks).toEqual(
      checks.map(({ name }) => ({ name, test: ["CMD", "node", "deploy/probes/nats-connected.mjs"] })),
    );
    expect(existsInRepo("deploy/probes/nats-connected.mjs")).toBe(true);
    expect(existsInRepo("deploy/probes/http-ok.mjs")).toBe(true);
  });

  it.each(services)("wires NATS, OTLP tracing and its own service name into %s", (name) => {
    const env = service(name).environment ?? {};
    expect({
      NATS_URL: interpolate(env.NATS_URL ?? ""),
      OTEL_EXPORTER_OTLP_ENDPOINT: env.OTEL_EXPORTER_OTLP_ENDPOINT,
      OTEL_SERVICE_NAME: env.OTEL_SERVICE_NAME,
    }).toEqual({
      NATS_URL: "nats://nats:4222",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://jaeger:4318",
      OTEL_SERVICE_NAME: `toolbus-${name}`,
    });
  });

  it("gives DATABASE_URL to approvals and memory only, pointing at the compose Postgres", () => {
    const withDatabase = services.filter((name) => service(name).environment?.DATABASE_URL !== undefined);
    expect(withDatabase.sort()).toEqual(WITH_DATABASE);
    const pg = service("postgres").environment ?? {};
    for (const name of WITH_DATABASE) {
      const url = new URL(service(name).environment!.DATABASE_URL!);
      expect({
        protocol: url.protocol,
        user: url.username,
        password: url.password,
        host: url.host,
        database: url.pathname.slice(1),
      }).toEqual({
        protocol: "postgres:",
        user: pg.POSTGRES_USER,
        password: pg.POSTGRES_PASSWORD,
        host: "postgres:5432",
        database: pg.POSTGRES_DB,
      });
    }
  });

  it.each(services)("starts %s once NATS (and Postgres, where it needs it) are healthy", (name) => {
    const dependsOn = Object.entries(service(name).depends_on ?? {}).filter(
      ([, { condition }]) => condition === "service_healthy",
    );
    const required = dependsOn.filter(([, dep]) => dep.required !== false).map(([target]) => target);
    const optional = dependsOn.filter(([, dep]) => dep.required === false).map(([target]) => target);
    expect({ required: required.sort(), optional: optional.sort() }).toEqual({
      required: WITH_DATABASE.includes(name) ? ["nats", "postgres"] : ["nats"],
      // The cluster profile's nodes, waited for only when that profile runs them.
      optional: CLUSTER,
    });
  });

  it("depends only on services that exist, and waits for health only where a health check is defined", () => {
    const problems = Object.entries(compose.services).flatMap(([name, entry]) =>
      Object.entries(entry.depends_on ?? {}).flatMap(([target, { condition }]) => {
        const dependency = compose.services[target];
        if (dependency === undefined) return [`${name} depends on unknown ${target}`];
        if (
          condition === "service_healthy" &&
          (dependency.healthcheck === undefined || dependency.healthcheck.disable === true)
        ) {
          return [`${name} waits for ${target} to be healthy, but ${target} has no healthcheck`];
        }
        return [];
      }),
    );
    expect(problems).toEqual([]);
  });

  it("declares every named volume it mounts, and mounts every volume it declares", () => {
    const named = Object.values(compose.services)
      .flatMap(mountsOf)
      .map(({ source }) => source)
      .filter((source) => !source.startsWith(".") && !source.startsWith("/"));
    expect([...new Set(named)].sort()).toEqual(Object.keys(compose.volumes ?? {}).sort());
  });

  it("mounts an existing config file where each --config points", () => {
    const problems = services.flatMap((name) => {
      const entry = service(name);
      const configPath = flagValue(entry.command ?? [], "--config");
      if (configPath === undefined) return [];
      const mount = mountsOf(entry).find(({ target }) => target === configPath);
      if (mount === undefined) return [`${name}: nothing is mounted at ${configPath}`];
      return existsInRepo(mount.source) ? [] : [`${name}: ${mount.source} does not exist`];
    });
    expect(problems).toEqual([]);
    expect(flagValue(service("catalog").command ?? [], "--config")).toBe("/etc/toolbus/toolbus.toml");
  });

  it("mounts a config the toolbus.toml schema accepts, listening where compose publishes", () => {
    const config = parseToolbusToml(exampleToml, { path: "deploy/toolbus.example.toml" });
    expect({
      gateway: { host: config.gateway.host, port: config.gateway.port },
      approvals: config.approvals.port,
      approvalsHost: flagValue(service("approvals").command ?? [], "--host"),
      tokens: config.gateway.tokensEnv,
      // With tokens, binding 0.0.0.0 needs no escape hatch.
      allowUnauthenticated: config.gateway.allowUnauthenticated,
    }).toEqual({
      gateway: { host: "0.0.0.0", port: HTTP_PORTS.gateway },
      approvals: HTTP_PORTS.approvals,
      approvalsHost: "0.0.0.0",
      tokens: "TOOLBUS_GATEWAY_TOKENS",
      allowUnauthenticated: false,
    });
  });

  it.each(Object.keys(HTTP_PORTS))(
    "gives %s, which listens beyond loopback, the bearer tokens toolbus.toml names, required from the environment",
    (name) => {
      const { tokensEnv } = parseToolbusToml(exampleToml, { path: "deploy/toolbus.example.toml" }).gateway;
      expect(tokensEnv).toBe("TOOLBUS_GATEWAY_TOKENS");
      const value = service(name).environment?.[tokensEnv!] ?? "";
      expect(interpolate(value, { TOOLBUS_GATEWAY_TOKENS: "t1,t2" })).toBe("t1,t2");
      // Unset, compose refuses to start rather than run the HTTP services open.
      expect(() => interpolate(value)).toThrow(/TOOLBUS_GATEWAY_TOKENS is required/);
    },
  );

  it("starts server-everything from the path where the image installs it", () => {
    const document = parseToml(exampleToml) as {
      mcp_servers: Record<string, { command?: string; args?: string[]; cwd?: string }>;
    };
    const everything = document.mcp_servers.everything;
    expect(everything?.command).toBe("node");
    expect(everything?.args?.at(-1)).toBe("stdio");
    // The image copies the workspace to /app, so /app/<path> is <path> in this checkout.
    expect(everything?.cwd?.startsWith("/app/")).toBe(true);
    const script = `${everything!.cwd!.slice("/app/".length)}/${everything!.args![0]}`;
    expect(script).toBe(
      "services/catalog/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    expect(existsInRepo(script)).toBe(true);
  });
});

/** The seeds (`<role>.nk`) a compose service gets, through secrets or volumes, by the repository file. */
function seedsOf(entry: ComposeService): string[] {
  const fromSecrets = secretsOf(entry).map(({ name }) => secretFile(name) ?? `<undeclared secret ${name}>`);
  const fromVolumes = mountsOf(entry).map(({ source }) => source.replace(/^\.\//, ""));
  return [...fromSecrets, ...fromVolumes].filter((file) => file.endsWith(".nk") || file === NATS_AUTH);
}

describe("docker-compose.yml NATS identities", () => {
  it("gives each container the seeds of its own identities, and no other seed", () => {
    const catalogs = new Map(catalogContainers().map((catalog) => [catalog.name, catalog]));
    const expected = (name: string): string[] => {
      if (name === PROVISION) return [seed("provisioner")];
      const catalog = catalogs.get(name);
      if (catalog !== undefined) {
        // Its own seed when it serves catalog.*, and the connector seed of each server it runs.
        return [
          ...(catalog.front ? [seed("catalog")] : []),
          ...catalog.servers.map((s) => seed("connector", s)),
        ];
      }
      return services.includes(name) ? [seed(name)] : [];
    };
    const names = Object.keys(compose.services);
    expect(Object.fromEntries(names.map((name) => [name, seedsOf(service(name))]))).toEqual(
      Object.fromEntries(names.map((name) => [name, expected(name)])),
    );
    expect(catalogs.size).toBeGreaterThan(0);
  });

  it("gives the provisioner's seed, which may change every stream, to the provision container alone", () => {
    const holders = Object.entries(compose.services)
      .filter(([, entry]) => seedsOf(entry).includes(seed("provisioner")))
      .map(([name]) => name);
    expect(holders).toEqual([PROVISION]);
    const own = secretsOf(service(PROVISION)).find((s) => secretFile(s.name) === seed("provisioner"));
    expect(service(PROVISION).environment?.NATS_NKEY_FILE).toBe(own?.path);
  });

  it("runs every server of the config in exactly one catalog container, and at least one serves catalog.*", () => {
    const catalogs = catalogContainers();
    expect(catalogs.flatMap((catalog) => catalog.servers).sort()).toEqual(configServers);
    expect(catalogs.some((catalog) => catalog.front)).toBe(true);
    expect(configServers.length).toBeGreaterThan(0);
  });

  it("mounts each connector seed in NATS_NKEY_DIR, under the name the catalog looks for", () => {
    const problems = catalogContainers().flatMap(({ name, servers }) => {
      const entry = service(name);
      const dir = entry.environment?.NATS_NKEY_DIR;
      if (dir === undefined) return [`${name}: no NATS_NKEY_DIR`];
      const paths = secretsOf(entry);
      return servers
        .filter((server) => {
          const mounted = paths.find((p) => secretFile(p.name) === seed("connector", server));
          return mounted?.path !== seedFileOf(dir, identityOf("connector", server));
        })
        .map(
          (server) => `${name}: the seed of ${server}'s connector is not at ${dir}/connector-${server}.nk`,
        );
    });
    expect(problems).toEqual([]);
  });

  it.each(services)("points NATS_NKEY_FILE of %s at the secret holding its seed", (name) => {
    const entry = service(name);
    const own = secretsOf(entry).find((secret) => secretFile(secret.name) === seed(name));
    expect(own).toBeDefined();
    expect(entry.environment?.NATS_NKEY_FILE).toBe(own?.path);
  });

  it("reads the secrets from the folder toolbus nats-config writes, which git ignores", () => {
    const files = Object.values(compose.secrets ?? {}).map((secret) => secret.file ?? "");
    expect(files.filter((file) => !file.startsWith(`./${NATS_AUTH}/`))).toEqual([]);
    expect(readRepoFile(".gitignore").split("\n")).toContain(`${NATS_AUTH}/`);
    // Every secret is used by some container.
    const used = new Set(
      Object.values(compose.services).flatMap((entry) => secretsOf(entry).map((s) => s.name)),
    );
    expect(Object.keys(compose.secrets ?? {}).filter((name) => !used.has(name))).toEqual([]);
  });

  it("tells the operator how to write the identities of the config's servers and how the CLI on the host uses its own", () => {
    const header = readRepoFile("docker-compose.yml");
    const configSource = mountsOf(service("catalog")).find(
      ({ target }) => target === flagValue(service("catalog").command ?? [], "--config"),
    )?.source;
    expect(configSource).toBe("./deploy/toolbus.example.toml");
    expect(header).toContain(
      `node packages/cli/bin/toolbus.js nats-config --out ${NATS_AUTH} --config ${configSource?.slice(2)}`,
    );
    expect(header).toContain(`NATS_URL=nats://127.0.0.1:4222 NATS_NKEY_FILE=${seedFileOf(NATS_AUTH, "cli")}`);
    expect(publishedPorts(service("nats"))).toContainEqual({
      hostIp: "127.0.0.1",
      published: 4222,
      target: 4222,
    });
  });
});

describe("docker-compose.yml provisioning", () => {
  const provision = () => service(PROVISION);

  it("runs toolbus provision once, from the services' image, with the config they read", () => {
    const entry = provision();
    expect({ build: entry.build, image: entry.image }).toEqual({
      build: service("gateway").build,
      image: service("gateway").image,
    });
    const flags = provisionFlags(entry.command);
    expect(flags).toEqual(["--config", "/etc/toolbus/toolbus.toml"]);
    const mount = mountsOf(entry).find(({ target }) => target === flags?.[1]);
    expect(mount).toEqual(mountsOf(service("catalog")).find(({ target }) => target === flags?.[1]));
    expect(mount?.readOnly).toBe(true);
    // A one-shot: never restarted, judged by its exit code rather than the image's health check.
    expect({ restart: entry.restart, healthcheck: entry.healthcheck }).toEqual({
      restart: "no",
      healthcheck: { disable: true },
    });
  });

  it("provisions once NATS is healthy, and the cluster profile's nodes when it runs them", () => {
    expect(provision().depends_on).toEqual({
      nats: { condition: "service_healthy" },
      ...Object.fromEntries(CLUSTER.map((node) => [node, { condition: "service_healthy", required: false }])),
    });
  });

  it.each(services)("starts %s only once provision has exited 0", (name) => {
    expect(service(name).depends_on?.[PROVISION]).toEqual({ condition: "service_completed_successfully" });
  });

  it("is waited for by the toolbus services alone", () => {
    const waiting = Object.entries(compose.services)
      .filter(([, entry]) => entry.depends_on?.[PROVISION] !== undefined)
      .map(([name]) => name);
    expect(waiting.sort()).toEqual([...services].sort());
  });

  it("provisions the bus the services use, under their prefix, on one node or on the cluster", () => {
    const clusterUrl = CLUSTER.map((node) => `nats://${node}:4222`).join(",");
    const shells: Record<string, string>[] = [{}, { TOOLBUS_NATS_URL: clusterUrl }];
    for (const shell of shells) {
      const busOf = (name: string) => {
        const env = service(name).environment ?? {};
        return {
          NATS_URL: interpolate(env.NATS_URL ?? "", shell),
          TOOLBUS_PREFIX: env.TOOLBUS_PREFIX,
          tls: Object.keys(env).filter((key) => key.startsWith("NATS_TLS_")),
        };
      };
      expect(services.map(busOf)).toEqual(services.map(() => busOf(PROVISION)));
    }
  });

  it("keeps each stream on one node, or on the three of the cluster profile with the TOOLBUS_JS_REPLICAS the header and deploy/README.md give", () => {
    const replicas = provision().environment?.TOOLBUS_JS_REPLICAS ?? "";
    expect(interpolate(replicas)).toBe("1");
    expect(interpolate(replicas, { TOOLBUS_JS_REPLICAS: String(CLUSTER.length) })).toBe("3");
    // The documented cluster command sets both: the nodes as NATS_URL, and as many replicas as nodes.
    const clusterUrl = CLUSTER.map((node) => `nats://${node}:4222`).join(",");
    for (const file of ["docker-compose.yml", "deploy/README.md"]) {
      const commands = readRepoFile(file)
        .split("\n")
        .filter((line) => line.includes("--profile cluster up"));
      expect({ file, commands: commands.map((line) => line.replace(/^#\s*/, "").trim()) }).toEqual({
        file,
        commands: [
          `TOOLBUS_NATS_URL=${clusterUrl} TOOLBUS_JS_REPLICAS=${CLUSTER.length} docker compose --profile cluster up --build --wait`,
        ],
      });
    }
  });
});

/** What cluster-node.sh passes to nats-server, read through a stand-in `nats-server` on PATH. */
function runClusterNode(
  node: string,
  password: string,
): { status: number | null; args: string[]; env: string; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), "toolbus-cluster-node-"));
  try {
    writeFileSync(join(dir, "route-password"), `${password}\n`);
    const stub = join(dir, "nats-server");
    writeFileSync(
      stub,
      `#!/bin/sh\nprintf '%s\\n' "$@" > "${dir}/args"\nprintf '%s' "$NATS_ROUTE_PASSWORD" > "${dir}/env"\n`,
    );
    chmodSync(stub, 0o755);
    const entry = service(node);
    const script = entry.entrypoint?.[1] ?? "";
    const mount = mountsOf(entry).find(({ target }) => target === script);
    const run = spawnSync("sh", [repoPath(mount?.source ?? "missing"), ...(entry.command ?? [])], {
      env: {
        PATH: `${dir}:${process.env.PATH ?? ""}`,
        NATS_ROUTE_PASSWORD_FILE: join(dir, "route-password"),
        NATS_CLUSTER_NODES: entry.environment?.NATS_CLUSTER_NODES ?? "",
      },
      encoding: "utf8",
      timeout: 10_000,
    });
    const read = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), "utf8") : "");
    return {
      status: run.status,
      args: read("args").split("\n").filter(Boolean),
      env: read("env"),
      stderr: run.stderr,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("docker-compose.yml cluster profile", () => {
  const clusterUrl = CLUSTER.map((node) => `nats://${node}:4222`).join(",");

  it("runs exactly three NATS nodes in the cluster profile, and nothing else there", () => {
    const inProfile = Object.entries(compose.services)
      .filter(([, entry]) => entry.profiles?.includes("cluster"))
      .map(([name]) => name);
    expect(inProfile).toEqual(CLUSTER);
    expect(CLUSTER.map((node) => service(node).image)).toEqual(CLUSTER.map(() => service("nats").image));
  });

  it.each(CLUSTER)(
    "starts %s from the committed cluster config, with JetStream on a volume of its own",
    (node) => {
      const entry = service(node);
      expect(entry.entrypoint).toEqual(["/bin/sh", "/etc/nats/cluster-node.sh"]);
      expect(entry.command).toEqual([node]);
      const mounts = mountsOf(entry);
      for (const file of ["nats.conf", "cluster.conf", "cluster-node.sh"]) {
        expect(mounts).toContainEqual({
          source: `./deploy/nats/${file}`,
          target: `/etc/nats/${file}`,
          readOnly: true,
        });
      }
      expect(natsConf("deploy/nats/cluster.conf").includes).toEqual(["nats.conf"]);
      const storeDir = natsConf("deploy/nats/nats.conf").storeDir;
      expect(mounts).toContainEqual({ source: `${node}-data`, target: storeDir, readOnly: false });
      // Plain /healthz: healthy once its JetStream is current with the meta leader, so the
      // provisioning that waits for the nodes can place streams on all three.
      expect(entry.healthcheck?.test).toEqual([
        "CMD",
        "wget",
        "-q",
        "-O",
        "/dev/null",
        "http://127.0.0.1:8222/healthz",
      ]);
    },
  );

  it.each(CLUSTER)("routes %s to every node of the cluster, with the route password", (node) => {
    const run = runClusterNode(node, "0123abcd");
    expect(run.status).toBe(0);
    const routes = flagValue(run.args, "--routes")?.split(",");
    const port = natsConf("deploy/nats/cluster.conf").clusterPort;
    expect({ config: flagValue(run.args, "--config"), name: flagValue(run.args, "--name"), routes }).toEqual({
      config: "/etc/nats/cluster.conf",
      name: node,
      routes: CLUSTER.map((other) => `nats://route:0123abcd@${other}:${port}`),
    });
    // cluster.conf's authorization block reads the same password from the environment.
    expect(run.env).toBe("0123abcd");
    expect(natsConf("deploy/nats/cluster.conf").routePassword).toBe("$NATS_ROUTE_PASSWORD");
  });

  it("refuses to start a node without a route password it can put in a URL", () => {
    for (const password of ["", "has space", "a@b:c"]) {
      const run = runClusterNode("nats-1", password);
      expect({ password, status: run.status, started: run.args.length > 0 }).toEqual({
        password,
        status: 1,
        started: false,
      });
      expect(run.stderr).toContain("route-password must hold a password of letters and digits");
    }
  });

  it("gives the route password to the nodes only, and publishes no cluster port", () => {
    const holders = Object.entries(compose.services)
      .filter(([, entry]) =>
        secretsOf(entry).some(({ name }) => secretFile(name) === `${NATS_AUTH}/route-password`),
      )
      .map(([name]) => name);
    expect(holders).toEqual(CLUSTER);
    const clusterPort = natsConf("deploy/nats/cluster.conf").clusterPort;
    const published = Object.values(compose.services).flatMap((entry) =>
      publishedPorts(entry).map((p) => p.target),
    );
    expect(published).not.toContain(clusterPort);
    expect(clusterPort).toBe(6222);
  });

  it("points the services at the three nodes with the TOOLBUS_NATS_URL the header and deploy/README.md give", () => {
    const documented = [readRepoFile("docker-compose.yml"), readRepoFile("deploy/README.md")].map((text) =>
      [...text.matchAll(/TOOLBUS_NATS_URL=(\S+)/g)].map((match) => match[1]),
    );
    expect(documented).toEqual([[clusterUrl], [clusterUrl]]);
    const urls = services.map((name) =>
      interpolate(service(name).environment?.NATS_URL ?? "", { TOOLBUS_NATS_URL: clusterUrl }),
    );
    expect(urls).toEqual(services.map(() => clusterUrl));
  });
});
