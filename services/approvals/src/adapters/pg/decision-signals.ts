/**
 * Wake-ups from other replicas, over Postgres LISTEN/NOTIFY: `PgPendingStore` notifies the
 * channel in the statement that resolves a request, and every replica listening wakes its
 * `DecisionWaiters` with what it hears. (The replica that resolves wakes its own waiters itself:
 * PGlite served over its socket never passes a NOTIFY to another connection, so there only the
 * re-read every `pollIntervalMs` reaches other replicas.) The payload is `{"requestId","result"}`
 * — the waiter answers with that decision without reading it back — or just the request id (a
 * decision too large for a payload): the waiter re-reads. One dedicated connection per replica;
 * when it drops it is re-opened with back-off and every waiter is woken to re-read (a
 * notification sent meanwhile would otherwise be missed).
 */
import { createHash } from "node:crypto";
import type { Logger } from "@toolbus/bus";
import { ApprovalDecideResultSchema } from "@toolbus/protocol";
import pg from "pg";
import { z } from "zod";
import type { DecisionWaiters } from "../../decision-waiters.js";

const WakeSchema = z.object({ requestId: z.string(), result: ApprovalDecideResultSchema });

const RECONNECT_DELAYS_MS = [100, 500, 1_000, 2_000, 5_000];

export class PgDecisionSignals {
  readonly #config: pg.ClientConfig;
  readonly #channel: string;
  readonly #waiters: DecisionWaiters;
  readonly #logger: Logger;
  #client: pg.Client | undefined;
  #closed = false;
  #failures = 0;
  #retry: NodeJS.Timeout | undefined;

  /** Wakes `waiters` with what is heard on `channel`. */
  constructor(config: pg.ClientConfig, channel: string, waiters: DecisionWaiters, logger: Logger) {
    this.#config = config;
    this.#channel = channel;
    this.#waiters = waiters;
    this.#logger = logger;
  }

  /** Starts listening; resolves once the LISTEN is in place (so no later NOTIFY is missed). */
  async start(): Promise<void> {
    await this.#listen();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    const client = this.#client;
    this.#client = undefined;
    this.#waiters.wakeAll();
    await client?.end().catch(() => {});
  }

  async #listen(): Promise<void> {
    const client = new pg.Client(this.#config);
    client.on("notification", (message) => {
      if (message.channel === this.#channel && message.payload !== undefined) this.#heard(message.payload);
    });
    client.on("error", (err) => this.#lost(client, err));
    client.on("end", () => this.#lost(client, new Error("connection ended")));
    await client.connect();
    await client.query(`LISTEN ${quoteIdentifier(this.#channel)}`);
    if (this.#closed) {
      await client.end().catch(() => {});
      return;
    }
    this.#client = client;
    this.#failures = 0;
  }

  #lost(client: pg.Client, err: Error): void {
    if (this.#closed || this.#client !== client) return;
    this.#client = undefined;
    client.end().catch(() => {});
    this.#logger.warn({ err }, "lost the Postgres LISTEN connection for approval decisions; reconnecting");
    this.#waiters.wakeAll();
    this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    const delay = RECONNECT_DELAYS_MS[Math.min(this.#failures, RECONNECT_DELAYS_MS.length - 1)] ?? 5_000;
    this.#failures += 1;
    this.#retry = setTimeout(() => {
      this.#listen().then(
        () => this.#waiters.wakeAll(),
        (err: unknown) => {
          this.#logger.warn({ err }, `could not LISTEN for approval decisions; retrying in ${delay} ms`);
          if (!this.#closed) this.#scheduleReconnect();
        },
      );
    }, delay);
  }

  #heard(payload: string): void {
    // A request id never starts with "{": anything else is the bare id of a large decision.
    if (!payload.startsWith("{")) {
      this.#waiters.wake(payload, undefined);
      return;
    }
    const parsed = WakeSchema.safeParse(safeJson(payload));
    if (parsed.success) {
      this.#waiters.wake(parsed.data.requestId, parsed.data.result);
      return;
    }
    // Whose it is cannot be told: every waiter re-reads its request rather than miss the answer.
    this.#logger.warn(
      { payload: payload.slice(0, 200) },
      "an approval decision notification could not be read; every waiting decide re-reads its request",
    );
    this.#waiters.wakeAll();
  }
}

/**
 * The NOTIFY channel of one prefix: tenants (and parallel tests) on one database stay apart.
 * Channel names are identifiers (at most 63 bytes), so a long prefix is replaced by its hash.
 */
export function decisionChannel(prefix: string): string {
  const channel = `${prefix}_approval_decisions`;
  if (channel.length <= 63) return channel;
  return `approval_decisions_${createHash("sha256").update(prefix).digest("hex").slice(0, 40)}`;
}

function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
