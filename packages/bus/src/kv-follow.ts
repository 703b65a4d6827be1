/**
 * Following a KV bucket entry by entry: every key's current value first, then each change after
 * it, so a reader keeps its own copy without ever asking for the whole bucket in one message
 * (whose size would then cap the bucket's). How the dispatcher and the gateway follow the catalog.
 */
import type { JetStreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";

export interface KvChange {
  key: string;
  /** `PUT`, or `DEL` / `PURGE` for an entry that is gone. */
  operation: string;
  /** The value as text (empty for a deletion). */
  value: string;
  /** The bucket's stream sequence of this change. */
  revision: number;
}

export interface KvFollowing {
  /** The bucket's revision (its stream's last sequence) when the first read was taken. */
  readonly revision: number;
  stop(): void;
}

/**
 * Calls `apply` for every entry there is, resolves once they all were (with the revision they
 * reflect), then calls `apply` for each later change in order, until `stop()`. `ended` hears
 * of a watch that ended by itself (its error, if it had one); the caller decides whether to follow again.
 * Rejects when the bucket does not exist.
 */
export async function followKv(deps: {
  kv: KV;
  jsm: JetStreamManager;
  bucket: string;
  apply(change: KvChange): void;
  ended(error?: unknown): void;
}): Promise<KvFollowing> {
  const info = await deps.jsm.streams.info(`KV_${deps.bucket}`);
  const revision = info.state.last_seq;
  for await (const key of await deps.kv.keys()) {
    const entry = await deps.kv.get(key);
    if (entry) {
      deps.apply({
        key: entry.key,
        operation: entry.operation,
        value: entry.operation === "PUT" ? entry.string() : "",
        revision: entry.revision,
      });
    }
  }
  // Changes made while the keys were read arrive again here: applying one twice is harmless.
  const watch = await deps.kv.watch({ resumeFromRevision: revision + 1 });
  let stopped = false;
  void (async () => {
    try {
      for await (const update of watch) {
        deps.apply({
          key: update.key,
          operation: update.operation,
          value: update.operation === "PUT" ? update.string() : "",
          revision: update.revision,
        });
      }
      if (!stopped) deps.ended();
    } catch (error) {
      if (!stopped) deps.ended(error);
    }
  })();
  return {
    revision,
    stop() {
      stopped = true;
      watch.stop();
    },
  };
}
