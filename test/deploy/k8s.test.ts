/** deploy/k8s: the base and its overlays, checked against the services, the image and the config they run. */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readSeedFile, seedFileOf } from "@toolbus/bus";
import { parseToolbusToml } from "@toolbus/config";
import { type Identity, identityName, identityOf, type Role } from "@toolbus/protocol";
import { parse as parseToml } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  type Build,
  build,
  type Container,
  containerOf,
  deployments,
  jobs,
  type K8sObject,
  type Probe,
  workloads,
} from "./kustomize.js";
import { compiledMain, existsInRepo, flagValue, provisionFlags, readRepoFile, serviceNames } from "./repo.js";

/** The Secret holding an identity's NATS seed (`toolbus-nats-gateway`, `toolbus-nats-connector-github`), under the key `nkey`. */
const natsSecret = (identity: Role | Identity) =>
  `toolbus-nats-${typeof identity === "string" ? identity : identityName(identity)}`;
const SEED_KEY = "nkey";
const connector = (server: string) => identityOf("connector", server);

const BASE = "deploy/k8s/base";
const DEV = "deploy/k8s/overlays/dev";
const PROD = "deploy/k8s/overlays/prod";
const builds = { base: build(BASE), dev: build(DEV), prod: build(PROD) };
const layers = Object.entries(builds) as [string, Build][];
const overlays = layers.filter(([name]) => name !== "base");

const services = serviceNames();
const HTTP_SERVICES = ["approvals", "gateway"];
const CONFIG_FILE = "/etc/toolbus/toolbus.toml";
const NATS_PROBE = ["node", "deploy/probes/nats-connected.mjs"];

function deployment(built: Build, name: string): K8sObject {
  const found = deployments(built).find((d) => d.metadata.name === name);
  if (found === undefined) throw new Error(`${built.dir} has no Deployment ${name}`);
  return found;
}

/** The Deployments running the catalog: the connector groups, and whether each serves `catalog.*`. */
function connectorGroups(
  built: Build,
): { name: string; servers: string[]; front: boolean; container: Container; deployment: K8sObject }[] {
  return deployments(built)
    .map((d) => ({ name: d.metadata.name, container: containerOf(d), deployment: d }))
    .filter(({ container }) => compiledMain(container.args?.[0])?.service === "catalog")
    .map(({ name, container, deployment }) => ({
      name,
      container,
      deployment,
      servers: (flagValue(container.args ?? [], "--servers") ?? "").split(",").filter(Boolean),
      front: !(container.args ?? []).includes("--connectors-only"),
    }));
}

/** Every identity this build needs a seed Secret for: the provisioner, each service, each server's connector. */
function identitySecrets(built: Build): string[] {
  return [
    natsSecret("provisioner"),
    ...services.map((role) => natsSecret(role as Role)),
    ...Object.keys(tomlServers(built)).map((server) => natsSecret(connector(server))),
  ].sort();
}

/** The provision Job of a build. */
function provisionJob(built: Build): K8sObject {
  const found = jobs(built).find((job) => provisionFlags(containerOf(job).args) !== undefined);
  if (found === undefined) throw new Error(`${built.dir} has no Job running toolbus provision`);
  return found;
}

/** The toolbus.toml the toolbus-config ConfigMap carries in this build. */
function configText(built: Build): string {
  const path = built.configMaps.get("toolbus-config")?.files.get("toolbus.toml");
  if (path === undefined) throw new Error(`${built.dir} generates no toolbus-config with toolbus.toml`);
  return readRepoFile(path);
}

interface TomlServer {
  url?: string;
  bearer_token_env_var?: string;
}
function tomlServers(built: Build): Record<string, TomlServer> {
  return (parseToml(configText(built)) as { mcp_servers?: Record<string, TomlServer> }).mcp_servers ?? {};
}

function dockerfileUid(): number {
  const user = readRepoFile("Dockerfile")
    .split("\n")
    .filter((line) => line.startsWith("USER "))
    .at(-1);
  return Number(/^USER (\d+)/.exec(user ?? "")?.[1]);
}

type ProbeTarget = "nats" | { path: string; port: number | undefined; tokenEnv?: string } | undefined;

/** What a probe checks: the NATS connection, or an HTTP path and port (through httpGet or the http-ok probe). */
function probeTarget(probe: Probe | undefined, container: Container): ProbeTarget {
  if (probe?.httpGet !== undefined) {
    const { path, port } = probe.httpGet;
    const number =
      typeof port === "number" ? port : container.ports?.find((p) => p.name === port)?.containerPort;
    return { path, port: number };
  }
  const command = probe?.exec?.command ?? [];
  if (command.join(" ") === NATS_PROBE.join(" ")) return "nats";
  if (command[1] === "deploy/probes/http-ok.mjs" && command[2] !== undefined) {
    const url = new URL(command[2]);
    const tokenEnv = flagValue(command, "--token-env");
    return { path: url.pathname, port: Number(url.port), ...(tokenEnv === undefined ? {} : { tokenEnv }) };
  }
  return undefined;
}

function probes(container: Container): { readiness: ProbeTarget; liveness: ProbeTarget } {
  return {
    readiness: probeTarget(container.readinessProbe, container),
    liveness: probeTarget(container.livenessProbe, container),
  };
}

describe("deploy/k8s kustomizations", () => {
  it.each(layers)("%s names only files and targets that exist", (_name, built) => {
    expect(built.problems).toEqual([]);
  });

  it.each(layers)(
    "%s generates the toolbus-config, toolbus-env and toolbus-secrets the pods use",
    (_name, built) => {
      expect([...built.configMaps.keys()].sort()).toEqual(["toolbus-config", "toolbus-env"]);
      expect([...built.secrets.keys()].sort()).toEqual(["toolbus-secrets", ...identitySecrets(built)].sort());
      const env = built.configMaps.get("toolbus-env")!.values;
      expect(env.get("NATS_URL")).toMatch(/^nats:\/\/\S+:4222$/);
      expect(env.get("OTEL_EXPORTER_OTLP_ENDPOINT")).toMatch(/^http:\/\/\S+:4318$/);
    },
  );

  it.each(overlays)(
    "the %s overlay sets a namespace it creates and the image of every container",
    (_name, built) => {
      const namespaces = built.objects.filter((o) => o.kind === "Namespace").map((o) => o.metadata.name);
      expect(namespaces).toEqual([built.kustomization.namespace]);
      expect(built.kustomization.images?.map((image) => image.name)).toEqual(["toolbus"]);
      expect([...new Set(workloads(built).map((w) => containerOf(w).image))]).toEqual(["toolbus"]);
    },
  );
});

describe("deploy/k8s base", () => {
  const base = builds.base;

  it.each(services.filter((name) => name !== "catalog"))("runs %s in a Deployment of that name", (name) => {
    const main = compiledMain(containerOf(deployment(base, name)).args?.[0]);
    expect(main?.service).toBe(name);
    expect(existsInRepo(main!.source)).toBe(true);
  });

  it("runs the catalog only as connector groups, each a catalog-<group> Deployment with --servers", () => {
    const groups = connectorGroups(base);
    expect(groups.map(({ name, servers }) => ({ name, servers }))).toEqual([
      { name: "catalog-everything", servers: ["everything"] },
    ]);
    expect(existsInRepo(compiledMain(groups[0]!.container.args?.[0])!.source)).toBe(true);
    expect(deployment(base, "catalog-everything").spec?.replicas).toBe(2);
  });

  it("gives every Deployment a selector that matches its pods and no other Deployment's", () => {
    const selectors = deployments(base).map((d) => d.spec?.selector?.matchLabels ?? {});
    const problems = deployments(base).flatMap((d, index) => {
      const labels = d.spec?.template?.metadata?.labels ?? {};
      const matches = (selector: Record<string, string>) =>
        Object.entries(selector).every(([key, value]) => labels[key] === value);
      return selectors
        .map((selector, other) => ({ other, hit: matches(selector) }))
        .filter(({ other, hit }) => hit !== (other === index))
        .map(({ other }) => `${d.metadata.name} vs ${deployments(base)[other]!.metadata.name}`);
    });
    expect(problems).toEqual([]);
  });

  it("probes the gateway on /healthz, and on /readyz with a bearer token of the variable toolbus.toml names", () => {
    const container = containerOf(deployment(base, "gateway"));
    const { tokensEnv } = parseToolbusToml(configText(base), { path: "toolbus.toml" }).gateway;
    expect(probes(container)).toEqual({
      readiness: { path: "/readyz", port: 8080, tokenEnv: tokensEnv },
      liveness: { path: "/healthz", port: 8080 },
    });
    expect(container.env?.find((e) => e.name === tokensEnv)?.valueFrom?.secretKeyRef?.name).toBe(
      "toolbus-secrets",
    );
  });

  it("probes approvals on /healthz, and on /readyz with a bearer token of the variable toolbus.toml names", () => {
    const container = containerOf(deployment(base, "approvals"));
    const { tokensEnv } = parseToolbusToml(configText(base), { path: "toolbus.toml" }).gateway;
    expect(probes(container)).toEqual({
      readiness: { path: "/readyz", port: 8081, tokenEnv: tokensEnv },
      liveness: { path: "/healthz", port: 8081 },
    });
    // The inbox reads the gateway's tokens: without them it refuses to listen on 0.0.0.0.
    expect(container.env?.find((e) => e.name === tokensEnv)?.valueFrom?.secretKeyRef?.name).toBe(
      "toolbus-secrets",
    );
  });

  it.each(HTTP_SERVICES)("exposes the HTTP port of %s through a Service that selects its pods", (name) => {
    const container = containerOf(deployment(base, name));
    const service = base.objects.find((o) => o.kind === "Service" && o.metadata.name === name);
    expect(service?.spec?.selector).toEqual(deployment(base, name).spec?.selector?.matchLabels);
    expect(service?.spec?.ports).toEqual([
      { name: "http", port: container.ports![0]!.containerPort, targetPort: "http" },
    ]);
  });

  it("listens where toolbus.toml puts the HTTP services, on every interface of the pod", () => {
    const config = parseToolbusToml(configText(base), { path: "toolbus.toml" });
    const port = (name: string) => containerOf(deployment(base, name)).ports?.[0]?.containerPort;
    expect({
      gateway: { host: config.gateway.host, port: config.gateway.port },
      approvals: {
        host: flagValue(containerOf(deployment(base, "approvals")).args ?? [], "--host"),
        port: config.approvals.port,
      },
    }).toEqual({
      gateway: { host: "0.0.0.0", port: port("gateway") },
      approvals: { host: "0.0.0.0", port: port("approvals") },
    });
  });

  it("probes the Deployments without HTTP through their NATS connection, with probes the image has", () => {
    const withoutHttp = deployments(base).filter((d) => containerOf(d).ports === undefined);
    expect(withoutHttp.map((d) => d.metadata.name).sort()).toEqual([
      "catalog-everything",
      "dispatcher",
      "memory",
    ]);
    const view = withoutHttp.map((d) => ({ name: d.metadata.name, ...probes(containerOf(d)) }));
    expect(view).toEqual(view.map(({ name }) => ({ name, readiness: "nats", liveness: "nats" })));
    expect(
      ["deploy/probes/nats-connected.mjs", "deploy/probes/http-ok.mjs"].filter((p) => !existsInRepo(p)),
    ).toEqual([]);
    expect(readRepoFile("Dockerfile")).toContain("COPY deploy/probes deploy/probes");
  });

  it("sets CPU and memory requests and limits on every container", () => {
    const missing = workloads(base).flatMap((d) => {
      const { resources } = containerOf(d);
      return ["requests", "limits"].flatMap((kind) =>
        ["cpu", "memory"]
          .filter((resource) => resources?.[kind as "requests" | "limits"]?.[resource] === undefined)
          .map((resource) => `${d.metadata.name}: ${kind}.${resource}`),
      );
    });
    expect(missing).toEqual([]);
  });

  it("runs every pod as the image's non-root user", () => {
    const users = workloads(base).map((d) => d.spec?.template?.spec.securityContext);
    expect(users).toEqual(
      users.map(() => expect.objectContaining({ runAsNonRoot: true, runAsUser: dockerfileUid() })),
    );
    expect(dockerfileUid()).toBeGreaterThan(0);
  });

  it("mounts the toolbus-config ConfigMap where every --config points", () => {
    const problems = workloads(base).flatMap((d) => {
      const container = containerOf(d);
      const configPath = flagValue(container.args ?? [], "--config");
      if (configPath === undefined) return [];
      const volume = d.spec?.template?.spec.volumes?.find((v) => v.configMap?.name === "toolbus-config");
      const mount = container.volumeMounts?.find((m) => m.name === volume?.name);
      return mount !== undefined && `${mount.mountPath}/toolbus.toml` === configPath
        ? []
        : [`${d.metadata.name} reads ${configPath}, where toolbus-config is not mounted`];
    });
    expect(problems).toEqual([]);
    expect(flagValue(containerOf(deployment(base, "gateway")).args ?? [], "--config")).toBe(CONFIG_FILE);
  });

  it("gives every container the shared environment, and DATABASE_URL from the Secret to approvals and memory", () => {
    const view = workloads(base).map((d) => {
      const container = containerOf(d);
      const database = container.env?.find((e) => e.name === "DATABASE_URL");
      return {
        name: d.metadata.name,
        envFrom: container.envFrom,
        database: database?.valueFrom?.secretKeyRef?.name,
      };
    });
    expect(view.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      {
        name: "approvals",
        envFrom: [{ configMapRef: { name: "toolbus-env" } }],
        database: "toolbus-secrets",
      },
      {
        name: "catalog-everything",
        envFrom: [{ configMapRef: { name: "toolbus-env" } }],
        database: undefined,
      },
      { name: "dispatcher", envFrom: [{ configMapRef: { name: "toolbus-env" } }], database: undefined },
      { name: "gateway", envFrom: [{ configMapRef: { name: "toolbus-env" } }], database: undefined },
      { name: "memory", envFrom: [{ configMapRef: { name: "toolbus-env" } }], database: "toolbus-secrets" },
      {
        name: "toolbus-provision",
        envFrom: [{ configMapRef: { name: "toolbus-env" } }],
        database: undefined,
      },
    ]);
  });

  it("sets the gateway's bearer tokens, in the variable toolbus.toml names, from the Secret", () => {
    const config = parseToolbusToml(configText(base), { path: "toolbus.toml" });
    const tokens = containerOf(deployment(base, "gateway")).env?.find(
      (e) => e.name === config.gateway.tokensEnv,
    );
    expect(tokens?.valueFrom?.secretKeyRef).toEqual({
      name: "toolbus-secrets",
      key: config.gateway.tokensEnv,
    });
  });
});

describe.each(layers)("deploy/k8s %s", (_name, built) => {
  it("carries a toolbus.toml the schema accepts", () => {
    expect(() => parseToolbusToml(configText(built), { path: "toolbus.toml" })).not.toThrow();
  });

  it("runs each server of its toolbus.toml in exactly one connector group", () => {
    const served = connectorGroups(built).flatMap(({ servers }) => servers);
    expect(served.sort()).toEqual(Object.keys(tomlServers(built)).sort());
  });

  it("names each connector group after the servers it runs", () => {
    const groups = connectorGroups(built);
    expect(groups.map(({ name }) => name)).toEqual(
      groups.map(({ servers }) => `catalog-${servers.join("-")}`),
    );
  });

  it("gives each connector group the bearer tokens of its HTTP servers from the Secret", () => {
    const servers = tomlServers(built);
    const missing = connectorGroups(built).flatMap(({ name, servers: group, container }) =>
      group
        .map((server) => servers[server]?.bearer_token_env_var)
        .filter((variable): variable is string => variable !== undefined)
        .filter((variable) => {
          const ref = container.env?.find((e) => e.name === variable)?.valueFrom?.secretKeyRef;
          return (
            ref?.name !== "toolbus-secrets" || !built.secrets.get("toolbus-secrets")?.values.has(ref.key)
          );
        })
        .map((variable) => `${name}: ${variable}`),
    );
    expect(missing).toEqual([]);
  });

  it("generates every Secret key a container reads", () => {
    const keys = built.secrets.get("toolbus-secrets")?.values ?? new Map();
    const missing = workloads(built).flatMap((d) =>
      (containerOf(d).env ?? [])
        .map((e) => e.valueFrom?.secretKeyRef)
        .filter((ref) => ref !== undefined && (ref.name !== "toolbus-secrets" || !keys.has(ref.key)))
        .map((ref) => `${d.metadata.name}: ${ref?.name}/${ref?.key}`),
    );
    expect(missing).toEqual([]);
  });
});

describe("deploy/k8s overlays", () => {
  it("dev runs one replica of every Deployment, from the image docker compose builds", () => {
    const replicas = deployments(builds.dev).map((d) => d.spec?.replicas);
    expect(replicas).toEqual(replicas.map(() => 1));
    const compose = parse(readRepoFile("docker-compose.yml"), { merge: true }) as {
      services: { gateway: { image: string } };
    };
    const image = builds.dev.kustomization.images?.[0];
    expect(`${image?.newName}:${image?.newTag}`).toBe(compose.services.gateway.image);
  });

  it("prod runs at least two replicas of every Deployment, and more than the base of each one it shares", () => {
    const view = deployments(builds.prod).map((d) => {
      const inBase = deployments(builds.base).find((b) => b.metadata.name === d.metadata.name);
      return {
        name: d.metadata.name,
        atLeastTwo: (d.spec?.replicas ?? 1) >= 2,
        notFewerThanBase: (d.spec?.replicas ?? 1) >= (inBase?.spec?.replicas ?? 1),
      };
    });
    expect(view).toEqual(view.map(({ name }) => ({ name, atLeastTwo: true, notFewerThanBase: true })));
  });

  it("prod adds a second connector group to the base's, scaled on its own", () => {
    const groups = (built: Build) => connectorGroups(built).map(({ name }) => name);
    expect(groups(builds.prod)).toEqual([...groups(builds.base), "catalog-github"]);
    expect(builds.prod.kustomization.replicas).toContainEqual({ name: "catalog-github", count: 2 });
  });

  it("prod builds its Secret from a git-ignored file whose committed example lists every key", () => {
    expect(builds.prod.kustomization.secretGenerator?.find((g) => g.name === "toolbus-secrets")).toEqual({
      name: "toolbus-secrets",
      behavior: "replace",
      envs: ["secrets.env"],
    });
    expect(readRepoFile(`${PROD}/.gitignore`).split("\n")).toContain("secrets.env");
    expect([...(builds.prod.secrets.get("toolbus-secrets")?.values.keys() ?? [])].sort()).toEqual([
      "APPROVALS_DATABASE_URL",
      "GITHUB_MCP_TOKEN",
      "MEMORY_DATABASE_URL",
      "TOOLBUS_GATEWAY_TOKENS",
    ]);
  });
});

/** The role a Deployment runs: the service of its compiled main (catalog for every connector group). */
function roleOf(deployment: K8sObject): string {
  return (
    compiledMain(containerOf(deployment).args?.[0])?.service ?? `<no service: ${deployment.metadata.name}>`
  );
}

/** Every NATS seed Secret a workload's pods can read, through a volume (projected too) or the environment. */
function seedSecretsOf(workload: K8sObject): string[] {
  const spec = workload.spec?.template?.spec;
  const fromVolumes = (spec?.volumes ?? []).flatMap((v) => [
    v.secret?.secretName,
    ...(v.projected?.sources ?? []).map((source) => source.secret?.name),
  ]);
  const fromEnv = (spec?.containers ?? []).flatMap((c) => [
    ...(c.env ?? []).map((e) => e.valueFrom?.secretKeyRef?.name),
    ...(c.envFrom ?? []).map((e) => e.secretRef?.name),
  ]);
  return [...fromVolumes, ...fromEnv].filter(
    (name): name is string => name?.startsWith("toolbus-nats-") === true,
  );
}

/** The seed Secrets a workload should hold: those of the identities it runs as, and no other. */
function expectedSeedSecrets(built: Build, workload: K8sObject): string[] {
  if (workload.kind === "Job") return [natsSecret("provisioner")];
  const group = connectorGroups(built).find(({ name }) => name === workload.metadata.name);
  if (group === undefined) return [natsSecret(roleOf(workload) as Role)];
  // A group serving catalog.* holds the catalog's identity, and each holds its servers' connectors'.
  return [
    ...(group.front ? [natsSecret("catalog")] : []),
    ...group.servers.map((server) => natsSecret(connector(server))),
  ];
}

describe.each(layers)("deploy/k8s %s NATS identities", (_name, built) => {
  it("mounts into each workload the seed Secrets of its own identities and no other", () => {
    const view = workloads(built).map((w) => ({ name: w.metadata.name, seeds: seedSecretsOf(w) }));
    expect(view).toEqual(
      workloads(built).map((w) => ({ name: w.metadata.name, seeds: expectedSeedSecrets(built, w) })),
    );
  });

  it("gives the provisioner's seed, which may change every stream, to the provision Job alone", () => {
    const holders = workloads(built)
      .filter((w) => seedSecretsOf(w).includes(natsSecret("provisioner")))
      .map((w) => `${w.kind}/${w.metadata.name}`);
    expect(holders).toEqual([`Job/${provisionJob(built).metadata.name}`]);
  });

  it("points NATS_NKEY_FILE at the seed, in a read-only volume only the pod's uid (through fsGroup) and root can read", () => {
    // Every workload but a connectors-only group connects with an identity of its own.
    const withOwnSeed = workloads(built).filter(
      (w) => !connectorGroups(built).some(({ name, front }) => name === w.metadata.name && !front),
    );
    const ownSecret = (w: K8sObject) => expectedSeedSecrets(built, w)[0];
    const view = withOwnSeed.map((d) => {
      const spec = d.spec!.template!.spec;
      const container = containerOf(d);
      const volume = spec.volumes?.find((v) => v.secret?.secretName === ownSecret(d));
      const mount = container.volumeMounts?.find((m) => m.name === volume?.name);
      return {
        name: d.metadata.name,
        file: container.env?.find((e) => e.name === "NATS_NKEY_FILE")?.value,
        readOnly: mount?.readOnly,
        mode: volume?.secret?.defaultMode?.toString(8),
        fsGroup: spec.securityContext?.fsGroup,
      };
    });
    const expected = withOwnSeed.map((d) => {
      const spec = d.spec!.template!.spec;
      const volume = spec.volumes?.find((v) => v.secret?.secretName === ownSecret(d));
      const mount = containerOf(d).volumeMounts?.find((m) => m.name === volume?.name);
      return {
        name: d.metadata.name,
        file: `${mount?.mountPath}/${SEED_KEY}`,
        readOnly: true,
        mode: "440",
        fsGroup: spec.securityContext?.runAsGroup,
      };
    });
    expect(view).toEqual(expected);
    expect(new Set(expected.map((e) => e.fsGroup))).toEqual(new Set([dockerfileUid()]));
  });

  it("puts the seed of each server a connector group runs in NATS_NKEY_DIR, as connector-<server>.nk, read-only and 0440", () => {
    const view = connectorGroups(built).map(({ name, container, deployment }) => {
      const dir = container.env?.find((e) => e.name === "NATS_NKEY_DIR")?.value;
      const mount = container.volumeMounts?.find((m) => m.mountPath === dir);
      const volume = deployment.spec?.template?.spec.volumes?.find((v) => v.name === mount?.name);
      const files = (volume?.projected?.sources ?? []).flatMap(({ secret }) =>
        (secret?.items ?? []).map((item) => ({
          secret: secret?.name,
          key: item.key,
          file: `${mount?.mountPath}/${item.path}`,
        })),
      );
      return {
        name,
        files,
        readOnly: mount?.readOnly,
        mode: volume?.projected?.defaultMode?.toString(8),
        ownSeedFile: container.env?.some((e) => e.name === "NATS_NKEY_FILE"),
      };
    });
    expect(view).toEqual(
      connectorGroups(built).map(({ name, servers, front, container }) => {
        const dir = container.env?.find((e) => e.name === "NATS_NKEY_DIR")?.value ?? "<no NATS_NKEY_DIR>";
        return {
          name,
          // Where the catalog looks for each server's connector seed.
          files: servers.map((server) => ({
            secret: natsSecret(connector(server)),
            key: SEED_KEY,
            file: seedFileOf(dir, connector(server)),
          })),
          readOnly: true,
          mode: "440",
          // A connectors-only group holds no catalog identity.
          ownSeedFile: front,
        };
      }),
    );
  });

  it("serves catalog.* from at least one connector group", () => {
    expect(connectorGroups(built).filter(({ front }) => front).length).toBeGreaterThan(0);
  });

  it("generates each seed Secret with the one key the pods read", () => {
    const keys = identitySecrets(built).map((secret) => {
      const data = built.secrets.get(secret);
      return { secret, keys: [...(data?.values.keys() ?? []), ...(data?.files.keys() ?? [])] };
    });
    expect(keys).toEqual(identitySecrets(built).map((secret) => ({ secret, keys: [SEED_KEY] })));
  });

  it("keeps seeds out of its ConfigMaps", () => {
    const seedsInConfigMaps = [...built.configMaps].flatMap(([map, data]) => [
      ...[...data.values]
        .filter(([, value]) => /^SU[A-Z2-7]{50,}/.test(value))
        .map(([key]) => `${map}/${key}`),
      ...[...data.files].filter(([, path]) => path.endsWith(".nk")).map(([key]) => `${map}/${key}`),
    ]);
    expect(seedsInConfigMaps).toEqual([]);
  });
});

describe("deploy/k8s NATS seed Secrets", () => {
  it("has placeholders in the base, which a service refuses as its seed, naming the file", () => {
    const values = identitySecrets(builds.base).map((secret) =>
      builds.base.secrets.get(secret)?.values.get(SEED_KEY),
    );
    expect(values).toEqual(identitySecrets(builds.base).map(() => "CHANGE_ME"));
    const dir = mkdtempSync(join(tmpdir(), "toolbus-placeholder-"));
    try {
      const file = join(dir, SEED_KEY);
      writeFileSync(file, "CHANGE_ME");
      expect(() => readSeedFile(file)).toThrow(/is not an NKey user seed/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each(overlays)(
    "the %s overlay replaces each with the seed toolbus nats-config writes for its toolbus.toml into its git-ignored nats-auth/",
    (_name, built) => {
      const folder = `${built.dir}/nats-auth`;
      const identities = [
        "provisioner" as Role,
        ...(services as Role[]),
        ...Object.keys(tomlServers(built)).map(connector),
      ];
      const inBase = new Set(builds.base.secrets.keys());
      const files = identities.map((identity) => ({
        secret: natsSecret(identity),
        generator: built.kustomization.secretGenerator?.find((g) => g.name === natsSecret(identity))
          ?.behavior,
        file: built.secrets.get(natsSecret(identity))?.files.get(SEED_KEY),
      }));
      expect(files).toEqual(
        identities.map((identity) => ({
          secret: natsSecret(identity),
          // A server the base does not have gets a Secret of the overlay's own.
          generator: inBase.has(natsSecret(identity)) ? "replace" : undefined,
          file: seedFileOf(folder, identity),
        })),
      );
      expect(readRepoFile(`${built.dir}/.gitignore`).split("\n")).toContain("nats-auth/");
      // The identities follow the servers of the toolbus.toml the overlay mounts.
      const toml = built.configMaps.get("toolbus-config")?.files.get("toolbus.toml");
      expect(readRepoFile("deploy/README.md")).toContain(`nats-config --out ${folder} --config ${toml}`);
    },
  );
});

const helmValues = parse(readRepoFile("deploy/k8s/nats-values.yaml")) as {
  config?: { cluster?: { replicas?: number } };
};

describe.each(layers)("deploy/k8s %s provisioning", (name, built) => {
  it("runs toolbus provision in one Job, with the config and the bus of the services", () => {
    expect(jobs(built).map((job) => job.metadata.name)).toEqual([provisionJob(built).metadata.name]);
    const container = containerOf(provisionJob(built));
    expect(provisionFlags(container.args)).toEqual(["--config", CONFIG_FILE]);
    // The services' NATS_URL and TOOLBUS_PREFIX: the same toolbus-env.
    expect(container.envFrom).toEqual([{ configMapRef: { name: "toolbus-env" } }]);
    expect(deployments(built).map((d) => containerOf(d).envFrom)).toEqual(
      deployments(built).map(() => container.envFrom),
    );
  });

  it("retries while NATS is not up yet, never restarts a finished run, and goes away once done so the next apply provisions again", () => {
    const spec = provisionJob(built).spec!;
    expect({
      restartPolicy: spec.template?.spec.restartPolicy,
      retries: (spec.backoffLimit ?? 0) > 0,
      deletedOnceFinished: (spec.ttlSecondsAfterFinished ?? 0) > 0,
    }).toEqual({ restartPolicy: "Never", retries: true, deletedOnceFinished: true });
  });

  it("keeps each stream on as many nodes as the NATS it runs on has", () => {
    const replicas = built.configMaps.get("toolbus-env")?.values.get("TOOLBUS_JS_REPLICAS");
    // The chart of nats-values.yaml, except dev's single node (deploy/README.md, "Development").
    expect(replicas).toBe(name === "dev" ? "1" : String(helmValues.config?.cluster?.replicas));
  });
});

describe("deploy/README.md on the provision Job", () => {
  const readme = readRepoFile("deploy/README.md");
  const job = provisionJob(builds.base).metadata.name;
  /** The shell blocks of the README that apply an overlay. */
  const applyBlocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((match) => match[1]!)
    .filter((block) => block.includes("kubectl apply -k"));

  it("deletes the finished Job before each apply (its pod template cannot change), then waits for it", () => {
    expect(applyBlocks.length).toBe(overlays.length);
    const order = applyBlocks.map((block) => {
      const deletes = block.indexOf(`delete job ${job} --ignore-not-found`);
      const applies = block.indexOf("kubectl apply -k");
      const waits = block.indexOf(`wait --for=condition=complete job/${job}`);
      return { deletesFirst: deletes >= 0 && deletes < applies, waitsAfter: waits > applies };
    });
    expect(order).toEqual(applyBlocks.map(() => ({ deletesFirst: true, waitsAfter: true })));
  });
});

interface JsonPatchOp {
  op: string;
  path: string;
  value: Record<string, unknown> & { name: string };
}

describe("deploy/k8s components/nats-tls", () => {
  const component = parse(readRepoFile("deploy/k8s/components/nats-tls/kustomization.yaml")) as {
    kind: string;
    configMapGenerator: { name: string; behavior: string; literals: string[] }[];
    patches: { target: { kind: string; labelSelector: string }; patch: string }[];
  };
  const patchOps = component.patches.map((p) => parse(p.patch) as JsonPatchOp[]);
  const ops = patchOps[0] ?? [];
  const added = (path: string) => ops.filter((o) => o.op === "add" && o.path === path).map((o) => o.value);

  it("turns TLS on for every toolbus workload: a tls:// NATS_URL and the CA file the services read", () => {
    expect(component.kind).toBe("Component");
    expect(component.configMapGenerator).toEqual([
      {
        name: "toolbus-env",
        behavior: "merge",
        literals: ["NATS_URL=tls://nats.nats.svc.cluster.local:4222"],
      },
    ]);
    const selected = workloads(builds.prod).filter((w) =>
      component.patches.some(({ target }) => {
        const [key, value] = target.labelSelector.split("=");
        return target.kind === w.kind && w.metadata.labels?.[key!] === value;
      }),
    );
    expect(selected.map((w) => w.metadata.name).sort()).toEqual(
      workloads(builds.prod)
        .map((w) => w.metadata.name)
        .sort(),
    );
    // The same patch for every kind it targets.
    expect(patchOps).toEqual(patchOps.map(() => ops));
  });

  it("mounts the CA where NATS_TLS_CA_FILE points, read-only, from a volume the patch adds", () => {
    const env = added("/spec/template/spec/containers/0/env/-");
    const mounts = added("/spec/template/spec/containers/0/volumeMounts/-");
    const volumes = added("/spec/template/spec/volumes/-");
    expect(env.map((e) => e.name)).toEqual(["NATS_TLS_CA_FILE"]);
    const file = String(env[0]!.value);
    const mount = mounts.find((m) => file.startsWith(`${String(m.mountPath)}/`));
    expect(mount).toMatchObject({ readOnly: true });
    expect(volumes.map((v) => v.name)).toEqual([mount?.name]);
    // Its mount must not land inside another mount of the pods (/etc/toolbus is a ConfigMap).
    const existing = workloads(builds.prod).flatMap(
      (d) => containerOf(d).volumeMounts?.map((m) => m.mountPath) ?? [],
    );
    expect(
      existing.filter((path) => String(mount?.mountPath).startsWith(`${path}/`) || path === mount?.mountPath),
    ).toEqual([]);
  });
});
