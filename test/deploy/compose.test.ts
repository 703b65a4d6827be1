/** docker-compose.yml, checked as `docker compose config` would and against the services it runs. */
import { parseToolbusToml } from "@toolbus/config";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { compiledMain, existsInRepo, flagValue, readRepoFile, serviceNames } from "./repo.js";

interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  environment?: Record<string, string>;
  ports?: (string | { target: number; published?: string | number; host_ip?: string })[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

// `merge: true`: the file shares settings through YAML merge keys (`<<: *anchor`), as compose reads them.
const compose = parse(readRepoFile("docker-compose.yml"), { merge: true }) as ComposeFile;
const services = serviceNames();
const INFRA = ["nats", "postgres", "jaeger"];
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

function mountsOf(entry: ComposeService): { source: string; target: string }[] {
  return (entry.volumes ?? []).map((volume) => {
    const [source = "", target = ""] = volume.split(":");
    return { source, target };
  });
}

const exampleToml = readRepoFile("deploy/toolbus.example.toml");

describe("docker-compose.yml", () => {
  it("lists exactly the infrastructure and one container per service", () => {
    expect(Object.keys(compose.services).sort()).toEqual([...INFRA, ...services].sort());
  });

  it("runs NATS with JetStream stored on a named volume and its monitoring port for the health check", () => {
    const nats = service("nats");
    expect(nats.image).toBe("nats:2.10-alpine");
    expect(nats.command).toEqual(expect.arrayContaining(["-js", "-m", "8222"]));
    const storeDir = flagValue(nats.command ?? [], "-sd");
    expect(mountsOf(nats)).toContainEqual({ source: "nats-data", target: storeDir });
    expect(nats.healthcheck?.test.join(" ")).toContain("http://127.0.0.1:8222/healthz");
  });

  it("runs Postgres on a named volume, checked with pg_isready", () => {
    const postgres = service("postgres");
    expect(postgres.image).toBe("postgres:15-alpine");
    expect(mountsOf(postgres)).toContainEqual({
      source: "postgres-data",
      target: "/var/lib/postgresql/data",
    });
    expect(postgres.healthcheck?.test.join(" ")).toContain("pg_isready");
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
      NATS_URL: env.NATS_URL,
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
    const dependsOn = service(name).depends_on ?? {};
    const healthy = Object.entries(dependsOn)
      .filter(([, { condition }]) => condition === "service_healthy")
      .map(([target]) => target)
      .sort();
    expect(healthy).toEqual(WITH_DATABASE.includes(name) ? ["nats", "postgres"] : ["nats"]);
  });

  it("depends only on services that exist, and waits for health only where a health check is defined", () => {
    const problems = Object.entries(compose.services).flatMap(([name, entry]) =>
      Object.entries(entry.depends_on ?? {}).flatMap(([target, { condition }]) => {
        const dependency = compose.services[target];
        if (dependency === undefined) return [`${name} depends on unknown ${target}`];
        if (condition === "service_healthy" && dependency.healthcheck === undefined) {
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
      // Without tokens, binding 0.0.0.0 must be allowed explicitly, or neither server starts.
      allowUnauthenticated: config.gateway.allowUnauthenticated,
    }).toEqual({
      gateway: { host: "0.0.0.0", port: HTTP_PORTS.gateway },
      approvals: HTTP_PORTS.approvals,
      approvalsHost: "0.0.0.0",
      tokens: undefined,
      allowUnauthenticated: true,
    });
  });

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
