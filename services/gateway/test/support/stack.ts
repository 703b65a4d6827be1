/**
 * A toolbus stack for the gateway's integration tests, on its own subject prefix: the catalog
 * and dispatcher services as child processes (as they run in production), the approval policy
 * the approvals service would publish for the config, real upstream MCP servers behind them, and
 * gateways started in-process with `startGatewayService`. The prefix is provisioned from the same
 * toolbus.toml before anything starts, as `pnpm start` runs `toolbus provision` first.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { type Bus, connectBus, createLogger } from "@toolbus/bus";
import { bareTokenName, parseToolbusToml, provisionInputs } from "@toolbus/config";
import { createSubjects, type Subjects } from "@toolbus/protocol";
import {
  approvalPolicyOf,
  cleanupJetStream,
  eventually,
  isolation,
  provisionPrefix,
  publishApprovalPolicy,
} from "@toolbus/testkit";
import {
  type GatewayService,
  type GatewayServiceDeps,
  startGatewayService,
} from "../../src/gateway-service.js";

export { eventually } from "@toolbus/testkit";

export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

export function natsUrl(): string {
  const url = process.env.NATS_URL;
  if (!url)
    throw new Error("NATS_URL is not set: run the tests through vitest (its global setup provides it)");
  return url;
}

/** One `[mcp_servers.<name>]` table: a stdio server (`command`, `args`) or a streamable HTTP one (`url`). */
export type ServerSpec = {
  name: string;
  approvalMode?: "approve" | "prompt" | "auto" | "writes";
} & ({ command: string; args: readonly string[] } | { url: string });

export function tomlFor(servers: readonly ServerSpec[], extra = ""): string {
  const tables = servers.map(
    (server) =>
      `[mcp_servers.${server.name}]\n` +
      ("url" in server
        ? `url = ${JSON.stringify(server.url)}\n`
        : `command = ${JSON.stringify(server.command)}\nargs = ${JSON.stringify(server.args)}\n`) +
      `default_tools_approval_mode = ${JSON.stringify(server.approvalMode ?? "approve")}\n`,
  );
  return `${tables.join("\n")}\n${extra}`;
}

export class Stack {
  readonly subjects: Subjects;
  readonly gateways: GatewayService[] = [];
  readonly logs: string[] = [];
  private readonly children: ChildProcess[] = [];
  private readonly buses: Bus[] = [];
  private readonly cleanups: Array<() => Promise<unknown>> = [];

  private constructor(
    readonly prefix: string,
    readonly dir: string,
    readonly configPath: string,
    readonly nc: NatsConnection,
    private readonly env: Readonly<Record<string, string>>,
  ) {
    this.subjects = createSubjects(prefix);
  }

  /**
   * Writes the config and starts the catalog and dispatcher, waiting until both are ready;
   * `env` is added to their environment (e.g. where to export their spans).
   */
  static async start(
    label: string,
    toml: string,
    services = ["catalog", "dispatcher"],
    env: Readonly<Record<string, string>> = {},
  ): Promise<Stack> {
    const { prefix } = isolation(label);
    const dir = await mkdtemp(join(tmpdir(), "toolbus-gateway-"));
    const configPath = join(dir, "toolbus.toml");
    await writeFile(configPath, toml);
    const stack = new Stack(prefix, dir, configPath, await connect({ servers: natsUrl() }), env);
    try {
      await provisionPrefix(
        natsUrl(),
        prefix,
        provisionInputs(parseToolbusToml(toml, { path: configPath }), env),
      );
      // No approvals service here: its published policy is stood in for (mode `approve` needs nobody).
      if (!services.includes("approvals")) {
        await publishApprovalPolicy(stack.nc, prefix, await approvalPolicyOf(configPath));
      }
      await Promise.all(services.map((service) => stack.spawnService(service)));
    } catch (error) {
      await stack.close();
      throw error;
    }
    return stack;
  }

  private spawnService(service: string): Promise<void> {
    const ready = service === "catalog" ? "catalog ready" : `${service} ready`;
    const child = spawn(
      process.execPath,
      [
        "--conditions=@toolbus/source",
        "--import",
        "tsx",
        `services/${service}/src/main.ts`,
        "--config",
        this.configPath,
      ],
      {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          ...this.env,
          TOOLBUS_PREFIX: this.prefix,
          NATS_URL: natsUrl(),
          LOG_LEVEL: "info",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    this.children.push(child);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(`${service} did not log "${ready}" within 90 s:\n${this.logs.slice(-20).join("\n")}`),
          ),
        90_000,
      );
      let buffer = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        buffer += chunk.toString("utf8");
        const lines = buffer.split("\n");
        buffer = lines.pop() ?? "";
        for (const line of lines) {
          this.logs.push(`${service}: ${line}`);
          if (line.includes(`"msg":"${ready}"`)) {
            clearTimeout(timer);
            resolve();
          }
        }
      });
      child.stderr?.on("data", (chunk: Buffer) =>
        this.logs.push(`${service} stderr: ${chunk.toString("utf8")}`),
      );
      child.once("exit", (code) => {
        clearTimeout(timer);
        reject(
          new Error(
            `${service} exited with ${code} before it was ready:\n${this.logs.slice(-20).join("\n")}`,
          ),
        );
      });
    });
  }

  /** A gateway on this stack's prefix, listening on a free port, with its own bus connection. */
  async gateway(
    options: Partial<
      Pick<GatewayServiceDeps, "principals" | "limits" | "plugins" | "env" | "views" | "toolScopes">
    > &
      Partial<GatewayServiceDeps["gateway"]> & {
        /** Bare tokens: admins, as a bare token in tokens_env is. */
        tokens?: readonly string[];
      } = {},
  ) {
    const logger = createLogger({
      service: "gateway",
      version: "test",
      level: "info",
      destination: new Writable({
        write: (chunk: Buffer, _encoding, done) => {
          this.logs.push(`gateway: ${chunk.toString("utf8").trim()}`);
          done();
        },
      }),
    });
    const bus = await connectBus({
      natsUrl: natsUrl(),
      service: { name: "gateway", version: "0.1.0" },
      logger,
    });
    this.buses.push(bus);
    const gateway = await startGatewayService({
      bus,
      subjects: this.subjects,
      logger,
      gateway: {
        ...options,
        port: options.port ?? 0,
        host: options.host ?? "127.0.0.1",
        naming: options.naming ?? "prefixed",
        allowedHosts: options.allowedHosts ?? ["localhost", "127.0.0.1", "[::1]"],
      },
      principals: [
        ...(options.principals ?? []),
        ...(options.tokens ?? []).map((token) => ({
          name: bareTokenName(token),
          role: "admin" as const,
          token,
        })),
      ],
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.plugins ? { plugins: options.plugins } : {}),
      ...(options.env ? { env: options.env } : {}),
      ...(options.views ? { views: options.views } : {}),
      ...(options.toolScopes ? { toolScopes: options.toolScopes } : {}),
    });
    this.gateways.push(gateway);
    await eventually("the gateway to load the catalog", () => (gateway.ready() ? true : undefined));
    return gateway;
  }

  /** Runs `cleanup` when the stack closes (upstream servers, temp folders). */
  defer(cleanup: () => Promise<unknown>): void {
    this.cleanups.push(cleanup);
  }

  async close(): Promise<void> {
    for (const gateway of this.gateways.splice(0)) await gateway.stop().catch(() => undefined);
    for (const bus of this.buses.splice(0)) await bus.close().catch(() => undefined);
    await Promise.all(this.children.splice(0).map((child) => stopChild(child)));
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    await this.nc.close();
    await cleanupJetStream(natsUrl(), this.prefix);
    await rm(this.dir, { recursive: true, force: true });
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** An SDK client connected to the gateway's `/mcp`. */
export async function mcpClient(
  gateway: Pick<GatewayService, "url">,
  options: { capabilities?: ClientCapabilities; headers?: Record<string, string> } = {},
): Promise<Client> {
  const client = new Client(
    { name: "gateway-test", version: "1.0.0" },
    { capabilities: options.capabilities ?? {} },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
    ...(options.headers ? { requestInit: { headers: options.headers } } : {}),
  });
  await client.connect(transport);
  return client;
}
