/**
 * The instances of a stdio server isolated per principal or per session: one per key, started
 * on its key's first call, stopped after `idleTimeoutMs` without a call, at most `maxInstances`
 * at once (an idle one is stopped to make room; with none idle the call is refused). The
 * catalog's own instance, which lists the server, is not one of them.
 */
import type { StdioIsolation } from "@toolbus/config";
import { type InstanceUse, makeRoom } from "../core/instance-key.js";

interface Closable {
  close(): Promise<void>;
}

interface Instance<C> {
  connection: Promise<C>;
  active: number;
  lastUsed: number;
  idleTimer: NodeJS.Timeout | undefined;
}

export class PoolFull extends Error {}

export class InstancePool<C extends Closable> {
  readonly #instances = new Map<string, Instance<C>>();
  #stopped = false;

  /**
   * `open` starts and initializes the instance of a key; `onStopped` is told of each instance
   * stopped for being idle or to make room.
   */
  constructor(
    private readonly isolation: Pick<StdioIsolation, "maxInstances" | "idleTimeoutMs">,
    private readonly open: (key: string) => Promise<C>,
    private readonly onStopped?: (key: string, why: "idle" | "room") => void,
  ) {}

  /**
   * Runs `use` on `key`'s instance, starting it if need be. Throws `PoolFull` when every instance
   * runs a call, and what `open` throws when the instance cannot start.
   */
  async run<T>(key: string, use: (connection: C) => Promise<T>): Promise<T> {
    if (this.#stopped) throw new Error("the catalog service is stopping");
    let instance = this.#instances.get(key);
    if (instance === undefined) {
      const room = makeRoom(this.#uses(), this.isolation.maxInstances);
      if (room.kind === "full") throw new PoolFull();
      if (room.kind === "evict") this.#stop(room.key, "room");
      instance = { connection: this.open(key), active: 0, lastUsed: performance.now(), idleTimer: undefined };
      this.#instances.set(key, instance);
      const started = instance;
      // An instance that cannot start is forgotten, so the key's next call tries again.
      started.connection.catch(() => {
        if (this.#instances.get(key) === started) this.#instances.delete(key);
      });
    }
    clearTimeout(instance.idleTimer);
    instance.idleTimer = undefined;
    instance.active++;
    try {
      return await use(await instance.connection);
    } finally {
      instance.active--;
      instance.lastUsed = performance.now();
      if (instance.active === 0 && this.#instances.get(key) === instance) {
        instance.idleTimer = setTimeout(() => this.#stop(key, "idle"), this.isolation.idleTimeoutMs);
        instance.idleTimer.unref();
      }
    }
  }

  /** Forgets `key`'s instance when it is `connection` (it closed by itself: the next call starts another). */
  forget(key: string, connection: C): void {
    const instance = this.#instances.get(key);
    if (instance === undefined) return;
    void instance.connection.then(
      (current) => {
        if (current === connection && this.#instances.get(key) === instance) {
          clearTimeout(instance.idleTimer);
          this.#instances.delete(key);
        }
      },
      () => undefined,
    );
  }

  /** Stops every instance; the pool starts no more. */
  async stop(): Promise<void> {
    this.#stopped = true;
    const keys = [...this.#instances.keys()];
    await Promise.all(keys.map((key) => this.#stop(key)));
  }

  #uses(): InstanceUse[] {
    return [...this.#instances].map(([key, { active, lastUsed }]) => ({ key, active, lastUsed }));
  }

  #stop(key: string, why?: "idle" | "room"): Promise<void> {
    const instance = this.#instances.get(key);
    if (instance === undefined) return Promise.resolve();
    clearTimeout(instance.idleTimer);
    this.#instances.delete(key);
    if (why !== undefined) this.onStopped?.(key, why);
    return instance.connection.then(
      (connection) => connection.close(),
      () => undefined,
    );
  }
}
