/**
 * The NATS that deploy/ runs: the compose configs (deploy/nats/*.conf) checked by the real
 * nats-server with the auth.conf `toolbus nats-config` writes, and the Helm values of
 * deploy/k8s/nats-values.yaml checked against what the chart needs for toolbus.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, nkeyAuthenticator } from "@nats-io/transport-node";
import { writeNatsIdentities } from "@toolbus/bus";
import { parseToolbusToml } from "@toolbus/config";
import { freePort } from "@toolbus/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { natsConf } from "./nats-conf.js";
import { readRepoFile, repoPath } from "./repo.js";

const BINARIES = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"];
const natsServer = BINARIES.find((candidate) => existsSync(candidate)) ?? "nats-server";

/** The servers of the config compose runs, each with a connector identity of its own. */
const SERVERS = Object.keys(
  parseToolbusToml(readRepoFile("deploy/toolbus.example.toml"), { path: "deploy/toolbus.example.toml" })
    .mcpServers,
);

/** deploy/nats's configs copied into a folder, with the auth.conf nats-config writes beside them when asked. */
function configFolder(withAuth: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), "toolbus-deploy-nats-"));
  for (const file of ["nats.conf", "cluster.conf"])
    copyFileSync(repoPath(`deploy/nats/${file}`), join(dir, file));
  if (withAuth) {
    const identities = writeNatsIdentities({
      dir: join(dir, "identities"),
      prefix: "toolbus",
      servers: SERVERS,
    });
    copyFileSync(identities.authConf, join(dir, "auth.conf"));
  }
  return dir;
}

/** `nats-server -t`: whether it accepts a config, and what it says. */
function check(config: string, env: Record<string, string> = {}): { ok: boolean; output: string } {
  const run = spawnSync(natsServer, ["-t", "-c", config], {
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    timeout: 10_000,
  });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}

describe("deploy/nats configs, read by nats-server", () => {
  const folders: string[] = [];
  const folder = (withAuth: boolean) => {
    const dir = configFolder(withAuth);
    folders.push(dir);
    return dir;
  };
  afterAll(() => {
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  it("accepts nats.conf with the auth.conf of toolbus nats-config beside it, and refuses it without", () => {
    expect(check(join(folder(true), "nats.conf")).ok).toBe(true);
    const without = check(join(folder(false), "nats.conf"));
    expect(without.ok).toBe(false);
    expect(without.output).toContain("auth.conf");
  });

  it("accepts cluster.conf with the route password in the environment, and refuses it without", () => {
    const dir = folder(true);
    expect(check(join(dir, "cluster.conf"), { NATS_ROUTE_PASSWORD: "0123abcd" }).ok).toBe(true);
    const without = check(join(dir, "cluster.conf"));
    expect(without.ok).toBe(false);
    expect(without.output).toContain("NATS_ROUTE_PASSWORD");
  });
});

describe("the compose NATS, running its committed config", () => {
  let dir: string;
  let server: ChildProcess;
  let url: string;

  beforeAll(async () => {
    dir = configFolder(true);
    const [port, monitor] = [await freePort(), await freePort()];
    url = `nats://127.0.0.1:${port}`;
    // The committed config, with only its addresses (flags) and its store (-sd may not repeat a
    // store_dir the config sets) moved to this test's own.
    const config = join(dir, "nats.conf");
    const storeDir = natsConf("deploy/nats/nats.conf").storeDir!;
    writeFileSync(
      config,
      readFileSync(config, "utf8").replace(`store_dir: ${storeDir}`, `store_dir: ${join(dir, "js")}`),
    );
    server = spawn(natsServer, ["-c", config, "-a", "127.0.0.1", "-p", String(port), "-m", String(monitor)], {
      stdio: "ignore",
    });
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const answer = await fetch(`http://127.0.0.1:${monitor}/healthz?js-enabled-only=true`).catch(
        () => undefined,
      );
      if (answer?.ok) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error("the compose nats.conf did not start within 15 s");
  });

  afterAll(async () => {
    if (server?.exitCode === null) {
      const exited = new Promise((resolve) => server.once("exit", resolve));
      server.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it("refuses a client without an identity", async () => {
    await expect(connect({ servers: url, reconnect: false, timeout: 5_000 })).rejects.toThrow(
      /Authorization Violation/,
    );
  });

  it.each(["gateway", "provisioner", ...SERVERS.map((server) => `connector-${server}`)])(
    "accepts the %s identity with the seed nats-config wrote for it",
    async (name) => {
      const seed = readFileSync(join(dir, "identities", `${name}.nk`), "utf8").trim();
      const nc = await connect({
        servers: url,
        reconnect: false,
        timeout: 5_000,
        authenticator: nkeyAuthenticator(new TextEncoder().encode(seed)),
      });
      expect(nc.info?.jetstream).toBe(true);
      await nc.close();
    },
  );
});

interface HelmValues {
  config?: {
    cluster?: { enabled?: boolean; replicas?: number; routeURLs?: { user?: string; password?: string } };
    jetstream?: { enabled?: boolean; fileStore?: { enabled?: boolean; pvc?: { size?: string } } };
    merge?: Record<string, unknown>;
  };
}

describe("deploy/k8s/nats-values.yaml (the NATS Helm chart)", () => {
  const values = parse(readRepoFile("deploy/k8s/nats-values.yaml")) as HelmValues;
  const readme = readRepoFile("deploy/README.md");

  it("runs a 3-node cluster with JetStream on persistent file storage", () => {
    expect({
      cluster: values.config?.cluster?.enabled,
      replicas: values.config?.cluster?.replicas,
      jetstream: values.config?.jetstream?.enabled,
      fileStore: values.config?.jetstream?.fileStore?.enabled,
      pvc: values.config?.jetstream?.fileStore?.pvc?.size,
    }).toEqual({
      cluster: true,
      replicas: 3,
      jetstream: true,
      fileStore: true,
      pvc: expect.stringMatching(/^\d+Gi$/),
    });
  });

  it("includes the auth.conf the README's helm command puts in the chart's ConfigMap", () => {
    const includes = Object.entries(values.config?.merge ?? {})
      .filter(([key]) => key.endsWith("$include"))
      .map(([, file]) => file);
    expect(includes).toEqual(["auth.conf"]);
    // The chart reads includes relative to its own nats.conf, in the ConfigMap it mounts beside it.
    const setFile = [
      ...readme.matchAll(/--set-file '?configMap\.merge\.data\.([\w\\.]+)=(\S+?)'?(\s|$)/g),
    ].map((match) => ({ key: match[1]!.replaceAll("\\", ""), file: match[2] }));
    expect(setFile).toContainEqual({
      key: "auth.conf",
      file: "deploy/k8s/overlays/prod/nats-auth/auth.conf",
    });
    expect(readme).toContain("-f deploy/k8s/nats-values.yaml");
  });

  it("authenticates routes, with a password the README's command sets rather than the file", () => {
    expect(values.config?.cluster?.routeURLs).toEqual({ user: "route" });
    expect(readme).toContain("--set config.cluster.routeURLs.password=");
  });
});
