/**
 * Every toolbus service started in this process on a fresh subject prefix and Postgres schema,
 * each on its own bus as in production: catalog (serving the scriptable MCP test server as
 * `scripted`, each server's connector on a bus of its own), dispatcher, approvals, memory and the
 * gateway, after the prefix was provisioned from the same toolbus.toml, as `pnpm start` does.
 * `stop()` leaves nothing behind.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type ApprovalsService,
  buildApprovalsHttp,
  loadApprovalsConfig,
  startApprovalsService,
} from "@toolbus/approvals";
import { type Bus, connectBus, createLogger } from "@toolbus/bus";
import { type CatalogService, startCatalogService } from "@toolbus/catalog";
import { type GatewayPrincipal, parseToolbusToml, provisionInputs } from "@toolbus/config";
import { type DispatcherService, startDispatcherService } from "@toolbus/dispatcher";
import {
  type GatewayLimits,
  type GatewayService,
  type GatewayServiceDeps,
  startGatewayService,
} from "@toolbus/gateway";
import { loadMemoryConfig, type MemoryService, startMemoryService } from "@toolbus/memory";
import {
  createSubjects,
  type Subjects,
  type ToolCallReply,
  ToolCallReplySchema,
  type ToolCallRequest,
} from "@toolbus/protocol";
import { cleanupJetStream, isolation, provisionPrefix, withPgSchema } from "@toolbus/testkit";
import {
  type StdioTestServer,
  startTestServer,
  type TestServerScript,
} from "@toolbus/testkit/mcp-test-server";
import { provided } from "@toolbus/testkit/provided";
import pg from "pg";

export interface Services {
  subjects: Subjects;
  /** A bus of the test's own, for requests and publishes. */
  client: Bus;
  /** A pool on the test's Postgres schema. */
  db: pg.Pool;
  catalog: CatalogService;
  dispatcher: DispatcherService;
  approvals: ApprovalsService;
  memory: MemoryService;
  gateway: GatewayService;
  /** The scripted MCP test server behind `scripted`: its call and cancellation logs. */
  upstream: StdioTestServer;
  /** `toolbus.dispatch.call` over the bus, as any caller sends it. */
  dispatch(request: Omit<ToolCallRequest, "callId"> & { callId?: string }): Promise<ToolCallReply>;
  /** An MCP client connected to the gateway's `/mcp`. */
  mcpClient(): Promise<Client>;
  /**
   * Another gateway on the same bus, with these `[gateway]` settings (and the same principals and
   * mounts); `env`: where it reads the secrets the settings name.
   */
  anotherGateway(
    gateway: Partial<GatewayServiceDeps["gateway"]>,
    env?: GatewayServiceDeps["env"],
  ): Promise<GatewayService>;
  /** Ends the client's session (DELETE /mcp), then closes it. */
  closeMcpClient(client: Client): Promise<void>;
  stop(): Promise<void>;
}

export interface ServicesOptions {
  label: string;
  script: TestServerScript;
  /** Tools of `scripted` in approval mode `prompt` (the rest are `approve`: nobody is asked). */
  promptTools?: readonly string[];
  /** Tools of `scripted` in approval mode `auto` (without annotations: asked, with session grants). */
  autoTools?: readonly string[];
  /** Bearer tokens of the gateway; none: auth off. */
  principals?: readonly GatewayPrincipal[];
  /** Mount the approvals routes and inbox on the gateway's port, as `pnpm start` does. */
  inbox?: boolean;
  /** The gateways' limits (e.g. a short session idle TTL); the rest keep their defaults. */
  gatewayLimits?: Partial<GatewayLimits>;
  /** `[gateway]` settings of the first gateway. */
  gateway?: Partial<GatewayServiceDeps["gateway"]>;
  /** `[approvals] self_approve`: a caller may answer its own call's approval. */
  selfApprove?: boolean;
  /** `[views.<name>]` and the scopes tools require, on every gateway. */
  views?: GatewayServiceDeps["views"];
  toolScopes?: GatewayServiceDeps["toolScopes"];
}

export async function startServices(options: ServicesOptions): Promise<Services> {
  const { natsUrl, databaseUrl } = provided();
  const { prefix } = isolation(options.label);
  const subjects = createSubjects(prefix);
  const cleanups: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    cleanups.push(() => cleanupJetStream(natsUrl, prefix));
    const schema = await withPgSchema(databaseUrl, options.label);
    cleanups.push(() => schema.drop());
    const db = new pg.Pool({ connectionString: schema.url, max: 2 });
    cleanups.push(() => db.end());
    const scripted: StdioTestServer = await startTestServer({ transport: "stdio", script: options.script });
    cleanups.push(() => scripted.dispose());
    const dir = await mkdtemp(join(tmpdir(), "toolbus-all-in-one-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const configPath = join(dir, "toolbus.toml");
    const toolModes = [
      ...(options.promptTools ?? []).map((tool) => [tool, "prompt"] as const),
      ...(options.autoTools ?? []).map((tool) => [tool, "auto"] as const),
    ].map(([tool, mode]) => `[mcp_servers.scripted.tools.${tool}]\napproval_mode = "${mode}"\n`);
    const toml = [
      `[mcp_servers.scripted]\ncommand = ${JSON.stringify(scripted.command)}\nargs = ${JSON.stringify(scripted.args)}\ndefault_tools_approval_mode = "approve"\n`,
      ...toolModes,
      ...(options.selfApprove ? ["[approvals]\nself_approve = true\n"] : []),
    ].join("\n");
    await writeFile(configPath, toml);
    const config = parseToolbusToml(toml, { path: configPath });
    // The session bucket keeps records as long as the gateways keep sessions, as when both read
    // TOOLBUS_GATEWAY_SESSION_TTL_SEC.
    const sessionTtl = options.gatewayLimits?.sessionIdleTtlMs;
    await provisionPrefix(natsUrl, prefix, {
      ...provisionInputs(config, {}),
      ...(sessionTtl === undefined ? {} : { gatewaySessionTtlMs: sessionTtl }),
    });
    const logger = createLogger({ service: "all-in-one-test", version: "test", level: "silent" });
    const env = { NATS_URL: natsUrl, DATABASE_URL: schema.url, TOOLBUS_PREFIX: prefix };
    const connect = async (name: string) => {
      const bus = await connectBus({ natsUrl, service: { name, version: "0.1.0" }, logger });
      cleanups.push(() => bus.close());
      return bus;
    };

    const client = await connect("all-in-one-test-client");
    const catalog = await startCatalogService({
      bus: await connect("catalog"),
      // Closed by the catalog service when it stops.
      connectorBus: (server) =>
        connectBus({ natsUrl, service: { name: `connector-${server}`, version: "0.1.0" }, logger }),
      subjects,
      config,
      env: { ...process.env, ...env },
      logger,
    });
    cleanups.push(() => catalog.stop());
    await catalog.startup;
    const dispatcher = await startDispatcherService({
      bus: await connect("dispatcher"),
      subjects,
      config,
      logger,
    });
    cleanups.push(() => dispatcher.stop());
    const approvalsConfig = await loadApprovalsConfig({ env, argv: ["--config", configPath], cwd: dir });
    const approvals = await startApprovalsService({
      bus: await connect("approvals"),
      config: { ...approvalsConfig, http: false },
      logger,
    });
    cleanups.push(() => approvals.drain().then(() => approvals.stop()));
    const memory = await startMemoryService({
      bus: await connect("memory"),
      config: loadMemoryConfig(env),
      logger,
    });
    cleanups.push(() => memory.drain().then(() => memory.stop()));
    await memory.ingesting;
    const launchGateway = async (
      settings: Partial<GatewayServiceDeps["gateway"]>,
      secrets?: GatewayServiceDeps["env"],
    ) => {
      const started = await startGatewayService({
        bus: await connect("gateway"),
        subjects,
        logger,
        gateway: { port: 0, host: "127.0.0.1", naming: "prefixed", allowedHosts: ["127.0.0.1"], ...settings },
        ...(options.principals ? { principals: options.principals } : {}),
        ...(options.inbox ? { plugins: [buildApprovalsHttp(approvals.inbox)] } : {}),
        ...(options.gatewayLimits ? { limits: options.gatewayLimits } : {}),
        ...(options.views ? { views: options.views } : {}),
        ...(options.toolScopes ? { toolScopes: options.toolScopes } : {}),
        selfApprove: config.approvals.selfApprove,
        ...(secrets ? { env: secrets } : {}),
      });
      cleanups.push(() => started.stop());
      await waitFor("the gateway to load the catalog", () => started.ready());
      return started;
    };
    const gateway = await launchGateway(options.gateway ?? {});

    let calls = 0;
    return {
      subjects,
      client,
      db,
      catalog,
      dispatcher,
      approvals,
      memory,
      gateway,
      upstream: scripted,
      dispatch: (request) =>
        client.request(
          subjects.dispatchCall,
          { callId: `metrics-${++calls}`, ...request },
          ToolCallReplySchema,
          { timeoutMs: 60_000 },
        ),
      async mcpClient() {
        const mcp = new Client({ name: "metrics-test", version: "1.0.0" });
        await mcp.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`)));
        cleanups.push(() => mcp.close());
        return mcp;
      },
      anotherGateway: launchGateway,
      async closeMcpClient(mcp) {
        await (mcp.transport as StreamableHTTPClientTransport | undefined)?.terminateSession();
        await mcp.close();
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Polls `check` every 20 ms until it is true; throws naming `what` after 20 s. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
