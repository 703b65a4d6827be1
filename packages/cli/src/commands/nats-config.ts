/**
 * `toolbus nats-config --out <dir>`: each identity's NKey seed and the nats-server `accounts`
 * block with every role's allow lists, derived from the protocol's subject table. Runs offline.
 */
import { writeNatsIdentities } from "@toolbus/bus";
import { createSubjects, permissionsFor, prefixFromEnv, ROLES } from "@toolbus/protocol";
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
  let prefix: string;
  try {
    prefix = prefixFromEnv(ctx.terminal.env);
  } catch (error) {
    throw new CliError({ kind: "config", message: error instanceof Error ? error.message : String(error) });
  }
  const identities = writeNatsIdentities({ dir, prefix, rotate: ctx.options.rotate === true });
  const subjects = createSubjects(prefix);
  const matrix = ROLES.map((role) => ({
    role,
    publicKey: identities.publicKeys.get(role),
    seedFile: identities.seedFile(role),
    ...permissionsFor(role, subjects),
  }));
  if (ctx.json) {
    printJson(ctx, { authConf: identities.authConf, prefix, identities: matrix });
    return ExitCode.ok;
  }
  out(ctx, `Wrote ${identities.authConf} and one NKey seed per identity (prefix ${prefix}):`);
  for (const row of matrix) {
    out(ctx, "", `${row.role}  ${row.seedFile}${row.allowResponses ? "  (answers requests)" : ""}`);
    out(ctx, ...row.publish.map((subject) => `  pub  ${subject}`));
    out(ctx, ...row.subscribe.map((subject) => `  sub  ${subject}`));
  }
  out(
    ctx,
    "",
    "Next: put `include auth.conf` in the nats-server config (beside it), reload nats-server, and run each",
    "service with NATS_NKEY_FILE pointing at its own <role>.nk (the CLI: cli.nk). Keep the .nk files secret.",
  );
  return ExitCode.ok;
}
