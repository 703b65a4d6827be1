/**
 * One way to start a service. Each service defines itself once (`ServiceDefinition`: its role,
 * its description, how its settings are read, how it starts on the buses it is given and what
 * "ready" means); `runServiceProcess` runs a definition as an OS process of its own (every
 * service's `main.ts`, so the cluster harness and deployments too), and `startService` starts it
 * inside a process that provides the buses (the all-in-one). Neither can drift from the other.
 */
import { type Identity, identityName, identityOf, type QueueGroup, TOOLBUS_VERSION } from "@toolbus/protocol";
import type { Bus, ServiceIdentity } from "./bus.js";
import { connectServiceBus } from "./bus.js";
import { createLogger, type Logger } from "./logger.js";
import { exitWithStartupError } from "./nats-identity.js";
import { configOrExit, type LogLevelName } from "./service-settings.js";
import { onShutdown, type RunningService } from "./shutdown.js";
import { startTelemetry } from "./telemetry.js";

/** Where a service's settings come from. */
export interface SettingsSource {
  /** The command line after the script. */
  argv: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  /** Where `./toolbus.toml` is looked for. */
  cwd: string;
}

/** What every service's settings carry, read as every service reads them (`ServiceSettingsSchema`). */
export interface CommonSettings {
  prefix: string;
  logLevel: LogLevelName;
}

/** Connects `identity`'s bus, announced on `$SRV` as `service`. */
export type BusConnector = (identity: Identity, service: ServiceIdentity, logger: Logger) => Promise<Bus>;

/** What a service starts with, whoever runs it. */
export interface ServiceContext<S> {
  settings: S;
  logger: Logger;
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /**
   * The service's own bus, on its role's identity, connected on first use and closed by whoever
   * runs the service. A catalog that runs connectors only never asks for it.
   */
  bus(): Promise<Bus>;
  /** The bus of another identity (a catalog connector's), described as `description`; the service closes it. */
  connect(identity: Identity, description: string, logger: Logger): Promise<Bus>;
}

export interface ServiceDefinition<S extends CommonSettings, R extends RunningService, X = never> {
  /** Its identity on the bus, its name in logs, `$SRV` and telemetry. */
  role: QueueGroup;
  /** What `$SRV.INFO` says it is. */
  description: string;
  /** Its settings; throws `ConfigError` naming every problem. */
  readSettings(source: SettingsSource): S | Promise<S>;
  /** Starts it: what it opens and serves. `extra`: what only an in-process host adds (the gateway's plugins). */
  start(context: ServiceContext<S>, extra?: X): Promise<R>;
  /**
   * Waits until it is ready and logs its ready line (what the cluster harness waits for); resolves
   * with the problem that stops it instead (the catalog: a required server that did not come up).
   */
  ready(service: R, logger: Logger): Promise<string | undefined>;
  /** How long work in flight may finish on shutdown; default the bus's. */
  graceMs?(settings: S): number | undefined;
}

export interface StartedService<R> {
  service: R;
  /** The service's own bus, when it asked for one; its host closes it. */
  bus: Bus | undefined;
}

/** Starts `definition` with buses from `host.connect`, which owns closing the service's own bus. */
export async function startService<S extends CommonSettings, R extends RunningService, X>(
  definition: ServiceDefinition<S, R, X>,
  host: Omit<ServiceContext<S>, "bus" | "connect"> & { connect: BusConnector },
  extra?: X,
): Promise<StartedService<R>> {
  const service = (identity: Identity, description: string): ServiceIdentity => ({
    name: identityName(identity),
    version: TOOLBUS_VERSION,
    description,
  });
  let own: Promise<Bus> | undefined;
  const bus = () => {
    const identity = identityOf(definition.role);
    own ??= host.connect(identity, service(identity, definition.description), host.logger);
    return own;
  };
  const started = await definition.start(
    {
      settings: host.settings,
      logger: host.logger,
      env: host.env,
      cwd: host.cwd,
      bus,
      connect: (identity, description, logger) =>
        host.connect(identity, service(identity, description), logger),
    },
    extra,
  );
  return { service: started, bus: own === undefined ? undefined : await own };
}

/**
 * What every `main.ts` does: settings (or exit 1 with every problem), logger, telemetry, the
 * buses of the identities in the environment (NATS_NKEY_FILE, NATS_NKEY_DIR), start (or exit 1
 * with one line), shutdown on SIGTERM/SIGINT, then ready (or shut down and exit 1).
 */
export async function runServiceProcess<S extends CommonSettings, R extends RunningService, X>(
  definition: ServiceDefinition<S, R, X>,
  source: SettingsSource = { argv: process.argv.slice(2), env: process.env, cwd: process.cwd() },
): Promise<void> {
  const { role } = definition;
  const settings = await configOrExit(() => definition.readSettings(source));
  const logger = createLogger({ service: role, version: TOOLBUS_VERSION, level: settings.logLevel });
  const stopTelemetry = await startTelemetry({ serviceName: `toolbus-${role}` });
  const { service, bus } = await startService(definition, {
    settings,
    logger,
    env: source.env,
    cwd: source.cwd,
    connect: (identity, service, busLogger) =>
      connectServiceBus({
        env: source.env,
        prefix: settings.prefix,
        role: identity,
        service,
        logger: busLogger,
      }),
  }).catch((error: unknown) => exitWithStartupError(role, error, logger));
  const graceMs = definition.graceMs?.(settings);
  let exitCode = 0;
  const shutdown = onShutdown(bus, {
    logger,
    service,
    closers: [stopTelemetry],
    ...(graceMs === undefined ? {} : { graceMs }),
    exit: (code) => process.exit(code || exitCode),
  });
  const problem = await definition.ready(service, logger);
  if (problem !== undefined) {
    logger.fatal(problem);
    exitCode = 1;
    await shutdown.shutdown(problem);
  }
}
