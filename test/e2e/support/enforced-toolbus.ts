/**
 * `pnpm start` on a nats-server of the test's own that enforces the accounts `toolbus
 * nats-config` writes for the test's servers (`NATS_URL` + `NATS_IDENTITIES_DIR`), with a Postgres
 * schema of its own and a toolbus.toml the test gives by its `[mcp_servers.*]` tables.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NatsIdentities, writeNatsIdentities } from "@toolbus/bus";
import {
  freePort,
  type NatsServerProcess,
  natsServerBinaries,
  type PgSchema,
  startNatsServer,
  withPgSchema,
} from "@toolbus/testkit";
import { bannerPrinted, exited, type RunningToolbus, startToolbus, until } from "./pnpm-start.js";

export interface EnforcedToolbus {
  /** `http://127.0.0.1:<port>` of the gateway. */
  url: string;
  toolbus: RunningToolbus;
  identities: NatsIdentities;
  server: NatsServerProcess;
  /** The Postgres schema toolbus works in. */
  schema: PgSchema;
  /** Stops toolbus (Ctrl-C), the nats-server and drops the schema. */
  stop(): Promise<void>;
}

/** The lines of one stdio server's table: its command, its arguments, then `extra` as given. */
export function stdioServerLines(
  command: string,
  args: readonly string[],
  extra: readonly string[] = [],
): string[] {
  return [`command = ${JSON.stringify(command)}`, `args = ${JSON.stringify(args)}`, ...extra];
}

export async function startEnforcedToolbus(options: {
  label: string;
  /** The configured servers' names: each gets a connector identity. */
  servers: readonly string[];
  /**
   * Each server's `[mcp_servers.<name>]` body, line by line, written once the identities and
   * the nats-server exist (a test may hand a server what they are).
   */
  tables: (bus: {
    identities: NatsIdentities;
    natsUrl: string;
  }) => Readonly<Record<string, readonly string[]>>;
  /** More toolbus.toml lines after the servers' tables (e.g. a tool's own table). */
  toml?: readonly string[];
  /** The newest nats-server this machine has when not given (2.10, as the deploy files run). */
  binary?: string;
  /** The environment of `pnpm start` besides the bus, the database and the config. */
  env?: NodeJS.ProcessEnv;
  /** Changes the generated nats-server configuration before the server starts. */
  natsConfig?: (config: string) => string;
}): Promise<EnforcedToolbus> {
  const binary =
    options.binary ?? natsServerBinaries().sort((a, b) => (a.version < b.version ? 1 : -1))[0]?.path;
  const identities = writeNatsIdentities({
    dir: mkdtempSync(join(tmpdir(), `toolbus-${options.label}-ids-`)),
    prefix: "toolbus",
    servers: options.servers,
  });
  const server = await startNatsServer({
    config: (options.natsConfig ?? ((config) => config))(readFileSync(identities.authConf, "utf8")),
    ...(binary ? { binary } : {}),
  });
  const schema = await withPgSchema(process.env.DATABASE_URL as string, options.label);
  const dir = mkdtempSync(join(tmpdir(), `toolbus-${options.label}-`));
  const port = await freePort();
  const config = join(dir, "toolbus.toml");
  writeFileSync(
    config,
    [
      "[gateway]",
      `port = ${port}`,
      "",
      ...Object.entries(options.tables({ identities, natsUrl: server.url })).flatMap(([name, lines]) => [
        `[mcp_servers.${name}]`,
        ...lines,
        "",
      ]),
      ...(options.toml ?? []),
      "",
    ].join("\n"),
  );
  const toolbus = startToolbus(
    ["--config", config],
    {
      ...options.env,
      NATS_URL: server.url,
      NATS_IDENTITIES_DIR: identities.dir,
      NATS_NKEY_FILE: undefined,
      DATABASE_URL: schema.url,
    },
    dir,
  );
  await until(() => bannerPrinted(toolbus) || toolbus.child.exitCode !== null, "start-up");
  return {
    url: `http://127.0.0.1:${port}`,
    toolbus,
    identities,
    server,
    schema,
    async stop() {
      if (toolbus.child.exitCode === null) {
        toolbus.child.kill("SIGINT");
        await exited(toolbus.child);
      }
      await server.stop();
      await schema.drop();
    },
  };
}
