/**
 * `toolbus nats-config --out <dir> [--config <path>]`: each identity's NKey seed and the
 * nats-server `accounts` block — one account per identity, with its allow lists, imports and
 * exports, derived from the protocol's tables — for the servers of the config. Runs offline.
 */
import { writeNatsIdentities } from "@toolbus/bus";
import { loadToolbusConfig } from "@toolbus/config";
import { createSubjects, identityName, permissionsFor, prefixFromEnv } from "@toolbus/protocol";
import { ExitCode } from "../core/exit-codes.js";
import { CliError } from "../core/failure.js";
import { type CommandContext, out, printJson } from "./context.js";

export async function runNatsConfig(ctx: CommandContext): Promise<ExitCode> {
  const dir = ctx.options.out;
  if (typeof dir !== "string" || dir === "") {
    throw new CliError({
      kind: "usage",
      message: "toolbus nats-config needs --out <dir>: the folder to write the identities and auth.conf into",
      command: "nats-config",
    });
  }
  const configPath = typeof ctx.options.config === "string" ? ctx.options.config : undefined;
  let prefix: string;
  let servers: string[];
  try {
    prefix = prefixFromEnv(ctx.terminal.env);
    const config = await loadToolbusConfig({
      ...(configPath ? { path: configPath } : {}),
      env: ctx.terminal.env,
      cwd: process.cwd(),
      // The demo config's one server, as `toolbus start` would run it.
      demoServer: () => ({ command: "server-everything", args: ["stdio"] }),
    });
    servers = Object.keys(config.mcpServers);
  } catch (error) {
    throw new CliError({ kind: "config", message: error instanceof Error ? error.message : String(error) });
  }
  const identities = writeNatsIdentities({ dir, prefix, servers, rotate: ctx.options.rotate === true });
  const subjects = createSubjects(prefix);
  const matrix = identities.identities.map((identity) => ({
    identity: identityName(identity),
    publicKey: identities.publicKeys.get(identityName(identity)),
    seedFile: identities.seedFile(identity),
    ...permissionsFor(identity, subjects),
  }));
  if (ctx.json) {
    printJson(ctx, { authConf: identities.authConf, prefix, servers, identities: matrix });
    return ExitCode.ok;
  }
  out(ctx, `Wrote ${identities.authConf} and one NKey seed per identity (prefix ${prefix}):`);
  for (const row of matrix) {
    out(ctx, "", `${row.identity}  ${row.seedFile}${row.allowResponses ? "  (answers requests)" : ""}`);
    out(ctx, ...row.publish.map((subject) => `  pub  ${subject}`));
    out(ctx, ...row.subscribe.map((subject) => `  sub  ${subject}`));
  }
  out(
    ctx,
    "",
    "Next: put `include auth.conf` in the nats-server config (beside it), reload nats-server, run",
    "`toolbus provision` with NATS_NKEY_FILE=provisioner.nk, then each service with NATS_NKEY_FILE",
    "pointing at its own <role>.nk (the catalog finds connector-<server>.nk beside its own). Keep the .nk files secret.",
  );
  return ExitCode.ok;
}
