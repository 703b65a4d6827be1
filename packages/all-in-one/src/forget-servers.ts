/**
 * Removes the catalog entries of servers the configuration no longer has, before any service
 * starts, so none of them lists a server nothing runs. An entry is removed by that server's
 * connector identity, the one that may write it (the provisioner may not delete): a local
 * nats-server gets identities for those servers first. Their records in the executions and
 * resource-origins buckets expire on their own (their TTLs) and nothing lists them.
 */
import { connectBus, type Logger } from "@toolbus/bus";
import { catalogKey, identityOf, type Subjects } from "@toolbus/protocol";
import { forgottenServers } from "./core/forgotten-servers.js";
import type { LocalNats } from "./local-nats.js";

export async function forgetServers(options: {
  nats: LocalNats;
  subjects: Subjects;
  /** The servers of the configuration in use. */
  configured: readonly string[];
  logger: Logger;
}): Promise<string[]> {
  const { nats, subjects, logger } = options;
  const service = { name: "toolbus-start", version: "0" };
  const reader = await connectBus({
    access: nats.accessFor(identityOf("catalog")),
    service,
    logger,
    warnUnauthenticated: false,
  });
  const keys: string[] = [];
  try {
    for await (const key of await (await reader.kv(subjects.kv.catalog)).keys("server.*")) keys.push(key);
  } finally {
    await reader.close();
  }
  const gone = forgottenServers(keys, options.configured);
  if (gone.length === 0) return gone;
  await nats.withServers(gone);
  for (const server of gone) {
    let access: ReturnType<LocalNats["accessFor"]>;
    try {
      access = nats.accessFor(identityOf("connector", server));
    } catch (error) {
      // A given NATS without that server's identity (`toolbus nats-config` wrote none).
      logger.warn({ server, err: error }, `cannot remove ${server}, no longer configured, from the catalog`);
      continue;
    }
    const bus = await connectBus({ access, service, logger, warnUnauthenticated: false });
    try {
      // Purged, not deleted: nothing of the entry stays in the bucket's history.
      await (await bus.kv(subjects.kv.catalog)).purge(catalogKey(server));
    } finally {
      await bus.close();
    }
  }
  logger.info({ servers: gone }, `removed ${gone.length} server(s) no longer configured from the catalog`);
  return gone;
}
