/**
 * `toolbus provision [--config <path>]`: creates every JetStream stream, bucket and durable
 * consumer toolbus uses, and brings existing ones back in line with the contract, sized by the
 * config's `[bus]` and `[memory]` tables. Runs as the provisioner (NATS_NKEY_FILE=provisioner.nk
 * on an authenticated bus), before any service starts; running services create nothing.
 */
import { AuthorizationError, ConnectionError } from "@nats-io/transport-node";
import { ConfigError, maskUrl, natsAccessFromEnv, ProvisionError, provisionBus } from "@toolbus/bus";
import { loadToolbusConfig, provisionInputs } from "@toolbus/config";
import { createSubjects, prefixFromEnv } from "@toolbus/protocol";
import { ExitCode } from "../core/exit-codes.js";
import { CliError } from "../core/failure.js";
import { type CommandContext, out, printJson } from "./context.js";

export async function runProvision(ctx: CommandContext): Promise<ExitCode> {
  const env = ctx.terminal.env;
  const configPath = typeof ctx.options.config === "string" ? ctx.options.config : undefined;
  let access: ReturnType<typeof natsAccessFromEnv>;
  let prefix: string;
  let config: Awaited<ReturnType<typeof loadToolbusConfig>>;
  try {
    prefix = prefixFromEnv(env);
    access = natsAccessFromEnv(env, { prefix, role: "provisioner" });
    config = await loadToolbusConfig({
      ...(configPath ? { path: configPath } : {}),
      env,
      cwd: process.cwd(),
      // Without a file, the demo's tables: their defaults are all that sizes the assets.
      demoServer: () => ({ command: "server-everything", args: ["stdio"] }),
    });
  } catch (error) {
    const message = error instanceof ConfigError ? error.problems.join("; ") : (error as Error).message;
    throw new CliError({ kind: "config", message });
  }
  let report: Awaited<ReturnType<typeof provisionBus>>;
  try {
    report = await provisionBus({
      access,
      subjects: createSubjects(prefix),
      settings: { ...provisionInputs(config, env), replicas: access.jetStreamReplicas ?? 1 },
    });
  } catch (error) {
    if (error instanceof ProvisionError) throw new CliError({ kind: "failed", message: error.message });
    // As every command says it (exit 3): a deploy step may wait for NATS and try again.
    const natsUrl = access.servers.map(maskUrl).join(",");
    const reason = (error as Error).message;
    if (error instanceof ConnectionError) throw new CliError({ kind: "nats_unreachable", natsUrl, reason });
    if (error instanceof AuthorizationError) {
      throw new CliError({ kind: "nats_refused", natsUrl, credentials: access.credentialSource, reason });
    }
    throw new CliError({
      kind: "failed",
      message: `provisioning on NATS at ${access.servers.join(",")} failed: ${(error as Error).message}`,
    });
  }
  if (ctx.json) {
    printJson(ctx, report);
    return ExitCode.ok;
  }
  for (const name of report.created) out(ctx, `created    ${name}`);
  for (const name of report.updated) out(ctx, `updated    ${name}`);
  for (const name of report.unchanged) out(ctx, `unchanged  ${name}`);
  return ExitCode.ok;
}
