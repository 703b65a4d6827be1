/**
 * `pnpm start` / `toolbus start`: every toolbus service in one process, for a laptop. NATS and
 * Postgres come from the environment when given, else from this machine (see local-nats.ts and
 * embedded-postgres.ts). Ctrl-C stops everything in reverse order.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { approvalsDefinition, approvalsHttpOverBus, buildApprovalsHttp } from "@toolbus/approvals";
import {
  type Bus,
  type CommonSettings,
  ConfigError,
  chooseLogFormat,
  connectBus,
  createLogger,
  type LogFormat,
  type Logger,
  maskUrl,
  projectStateDir,
  provisionBus,
  type RunningService,
  type ServiceDefinition,
  type ServiceIdentity,
  type SettingsSource,
  startService,
  startTelemetry,
} from "@toolbus/bus";
import { catalogDefinition } from "@toolbus/catalog";
import { fileVariableOf, provisionInputs, secretFromEnv } from "@toolbus/config";
import { dispatcherDefinition } from "@toolbus/dispatcher";
import { gatewayDefinition } from "@toolbus/gateway";
import { memoryDefinition } from "@toolbus/memory";
import { createSubjects, type Identity, identityOf, TOOLBUS_VERSION } from "@toolbus/protocol";
import { configLine, failedLines, startingSteps } from "./core/banner.js";
import { ensureDatabase } from "./embedded-postgres.js";
import { forgetServers } from "./forget-servers.js";
import { ensurePortFree } from "./http-port.js";
import { ensureNats, type LocalNats } from "./local-nats.js";
import { SetupError } from "./setup-error.js";

export interface AllInOneOptions {
  /** `--config <path>`; else TOOLBUS_CONFIG, ./toolbus.toml, or the demo config. */
  configPath?: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  logger?: Logger;
  /** How the services log when no `logger` is given (`--log-format`); default LOG_FORMAT, else by terminal. */
  logFormat?: LogFormat;
  /** Where URLs are announced; default stdout. */
  announce?: (line: string) => void;
}

export interface AllInOne {
  consoleUrl: string;
  mcpUrl: string;
  stop(): Promise<void>;
}

export async function startAllInOne(options: AllInOneOptions): Promise<AllInOne> {
  const { env, cwd } = options;
  // Each service's settings, read by its own definition as its own process reads them (`--config`
  // is the one flag here). What can be checked without starting anything comes first.
  const source: SettingsSource = {
    argv: options.configPath ? ["--config", options.configPath] : [],
    env,
    cwd,
  };
  const catalogSettings = await catalogDefinition.readSettings(source);
  const dispatcherSettings = await dispatcherDefinition.readSettings(source);
  const gatewaySettings = await gatewayDefinition.readSettings(source);
  // LOG_LEVEL and TOOLBUS_PREFIX, which every service reads the same way.
  const { logLevel: level, prefix, config } = catalogSettings;
  const format = options.logFormat === undefined ? {} : { format: options.logFormat };
  const logger =
    options.logger ?? createLogger({ service: "toolbus", version: TOOLBUS_VERSION, level, ...format });
  // Each service logs as itself (a child would repeat the `service` key in every line).
  const loggerOf = (service: string): Logger =>
    options.logger?.child({ component: service }) ??
    createLogger({ service, version: TOOLBUS_VERSION, level, ...format });
  const stops: Array<[string, () => Promise<void>]> = [];
  const stop = async () => {
    for (const [name, close] of stops.reverse()) {
      await close().catch((error: unknown) =>
        logger.error({ err: error, part: name }, `stopping ${name} failed`),
      );
    }
  };
  const announce = options.announce ?? ((line: string) => process.stdout.write(`${line}\n`));
  try {
    await ensurePortFree(gatewaySettings.edge.host, gatewaySettings.edge.port);
    const givenDatabase = secretFromEnv(env, "DATABASE_URL");
    if (givenDatabase.state === "invalid") throw new SetupError(givenDatabase.message);
    // Data in the project; secrets (the CLI's seed, the database socket) in its private state dir.
    const dataDir = join(cwd, ".toolbus");
    const stateDir = projectStateDir(cwd, env);
    if (!env.NATS_URL) announce(startingSteps.nats);
    const nats = await ensureNats({
      ...(env.NATS_URL ? { url: env.NATS_URL } : {}),
      ...(env.NATS_IDENTITIES_DIR ? { identitiesDir: env.NATS_IDENTITIES_DIR } : {}),
      prefix,
      servers: Object.keys(config.mcpServers),
      dataDir: join(dataDir, "nats"),
      stateDir,
      env,
    });
    stops.push(["nats", nats.stop]);
    if (nats.started)
      logger.info({ url: maskUrl(nats.url) }, "started a local nats-server with generated identities");
    const embedded = givenDatabase.state !== "set" || givenDatabase.value === "";
    if (embedded) announce(startingSteps.database(existsSync(join(dataDir, "pglite"))));
    const database = await ensureDatabase({
      ...(embedded ? {} : { url: givenDatabase.value }),
      dataDir: join(dataDir, "pglite"),
      socketDir: join(stateDir, "postgres"),
    });
    stops.push(["postgres", database.stop]);
    // The services that use the database read the URL resolved here, never the file again.
    const databaseSource: SettingsSource = {
      ...source,
      env: { ...withoutVariable(env, fileVariableOf("DATABASE_URL")), DATABASE_URL: database.url },
    };

    // Before any service: the streams, buckets and consumers, made by the provisioner alone.
    await provisionBus({
      access: nats.accessFor(identityOf("provisioner")),
      subjects: createSubjects(prefix),
      settings: { ...provisionInputs(config, env), replicas: 1 },
    });
    // An earlier configuration's servers are gone before any service reads the catalog.
    await forgetServers({
      nats,
      subjects: createSubjects(prefix),
      configured: Object.keys(config.mcpServers),
      logger,
    });
    // Every identity's bus on this NATS, closed when toolbus stops.
    const connect = async (identity: Identity, service: ServiceIdentity, busLogger: Logger): Promise<Bus> => {
      const bus = await connectBus({
        access: nats.accessFor(identity),
        service,
        logger: busLogger,
        // Said once, plainly, in the lines printed below instead.
        warnUnauthenticated: false,
      });
      stops.push([`${service.name} bus`, () => bus.close()]);
      return bus;
    };
    const readiness: Array<() => Promise<string | undefined>> = [];
    /** One service, started by its definition on buses of this NATS. */
    const start = async <S extends CommonSettings, R extends RunningService, X>(
      definition: ServiceDefinition<S, R, X>,
      settings: S,
      serviceEnv: SettingsSource["env"],
      extra?: X,
    ): Promise<R> => {
      const serviceLogger = loggerOf(definition.role);
      const host = { settings, logger: serviceLogger, env: serviceEnv, cwd, connect };
      const { service } = await startService(definition, host, extra);
      readiness.push(() => definition.ready(service, serviceLogger));
      return service;
    };

    announce(startingSteps.servers(Object.keys(config.mcpServers)));
    const catalog = await start(catalogDefinition, catalogSettings, env);
    stops.push(["catalog", () => catalog.stop()]);
    const approvals = await start(
      approvalsDefinition,
      // The gateway serves the inbox on its own port in all-in-one mode.
      { ...(await approvalsDefinition.readSettings(databaseSource)), http: false },
      databaseSource.env,
    );
    // Decides waiting for a human are answered, in-flight work finishes, then it stops.
    stops.push(["approvals", () => approvals.drain().then(() => approvals.stop())]);
    // After approvals, which publishes the policy: the dispatcher starts with its copy.
    const dispatcher = await start(dispatcherDefinition, dispatcherSettings, env);
    stops.push(["dispatcher", () => dispatcher.stop()]);
    const memorySettings = await memoryDefinition.readSettings(databaseSource);
    const memory = await start(memoryDefinition, memorySettings, databaseSource.env);
    stops.push(["memory", () => memory.drain().then(() => memory.stop())]);
    const gateway = await start(gatewayDefinition, gatewaySettings, env, {
      // In one process, the gateway's port also serves the approvals inbox and its API.
      plugins: (on) => [buildApprovalsHttp(approvalsHttpOverBus(on.bus, on.subjects, on.logger))],
    });
    stops.push(["gateway", () => gateway.stop()]);

    // Each service ready as its own process says it; a required server that did not come up
    // stops start-up, as it stops a Codex thread (§2.5).
    for (const ready of readiness) {
      const problem = await ready();
      if (problem !== undefined) throw new Error(problem);
    }
    const summary = await catalog.startup;
    announce(`toolbus is running (${summary.ready.length} server(s) ready, ${summary.failed.length} failed)`);
    announce(configLine(config.source));
    for (const line of failedLines(summary)) announce(line);
    announce(`  console        ${gateway.url}/`);
    announce(`  MCP endpoint   ${gateway.url}/mcp`);
    announce(`  approvals      ${gateway.url}/approvals`);
    announce(`  NATS           ${natsLine(nats)}`);
    const databaseLine = givenDatabase.state === "set" ? givenDatabase.variable : "DATABASE_URL";
    announce(`  Postgres       ${database.embedded ? "embedded PGlite in .toolbus/pglite" : databaseLine}`);
    return { consoleUrl: `${gateway.url}/`, mcpUrl: `${gateway.url}/mcp`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function withoutVariable(env: NodeJS.ProcessEnv, name: string): NodeJS.ProcessEnv {
  const { [name]: _dropped, ...rest } = env;
  return rest;
}

/** How the bus is reached and whether it is closed to clients without credentials. */
function natsLine(nats: LocalNats): string {
  const url = maskUrl(nats.url);
  if (nats.started)
    return `${url} (started here; every client needs an identity: the toolbus CLI run in this folder finds its own in ${nats.cliSeedFile})`;
  if (nats.identitiesDir !== undefined) return `${url} (identities from ${nats.identitiesDir})`;
  return (
    `${url} — UNAUTHENTICATED: anyone who can reach this NATS can call any tool, skipping approvals. ` +
    "Unset NATS_URL to let toolbus run its own with credentials, or set NATS_IDENTITIES_DIR (toolbus nats-config)."
  );
}

/**
 * Runs until `signal` aborts (Ctrl-C), then stops everything. The shape `toolbus start` calls:
 * resolves with the exit code; setup problems print one line that says what to do.
 */
export async function runAllInOne(options: {
  configPath?: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  json?: boolean;
  /** `--log-format`: pretty or json; default LOG_FORMAT, else pretty on a terminal. */
  logFormat?: string;
}): Promise<number> {
  const failed = (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`toolbus could not start: ${message}\n`);
  };
  // Five services share one heap here, and each large result passes through three of them:
  // V8's default lets garbage grow to about 2.5 times what is live before collecting it. Eight
  // 15 MiB results at once peaked at 706–790 MiB RSS so, 456–471 MiB with this (test/e2e/
  // hostile-large-results.test.ts). V8 reads the flag at each collection, so setting it now,
  // before any service starts, takes effect.
  setFlagsFromString("--optimize-for-size");
  let stopTelemetry: () => Promise<void>;
  try {
    // First: the services create their instruments on the meter provider it registers.
    stopTelemetry = await startTelemetry({ serviceName: "toolbus" });
  } catch (error) {
    failed(error);
    return error instanceof ConfigError ? 2 : 1;
  }
  let toolbus: AllInOne;
  try {
    const logFormat = chooseLogFormat({
      flag: options.logFormat,
      env: options.env.LOG_FORMAT,
      isTty: process.stdout.isTTY === true,
    });
    toolbus = await startAllInOne({
      logFormat,
      ...(options.configPath ? { configPath: options.configPath } : {}),
      env: options.env,
      cwd: process.cwd(),
    });
  } catch (error) {
    failed(error);
    await stopTelemetry();
    return error instanceof SetupError || error instanceof ConfigError ? 2 : 1;
  }
  if (!options.signal.aborted) {
    await new Promise((resolve) => options.signal.addEventListener("abort", resolve, { once: true }));
  }
  process.stderr.write("stopping toolbus…\n");
  await toolbus.stop();
  // Last: exports what the services recorded until they stopped.
  await stopTelemetry();
  return 0;
}
