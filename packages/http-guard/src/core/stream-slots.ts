/**
 * Open event streams, counted per client and in total, so one client (or many) cannot hold
 * every socket of the process. `take` either grants a slot (give it back with `release`) or
 * says which limit was reached.
 */

export interface StreamLimits {
  /** Streams open at once in the process. */
  total: number;
  /** Streams one client (a principal) holds at once. */
  perClient: number;
}

import { type ErrorCode, HTTP_STATUS_BY_CODE, HttpRefusal } from "@toolbus/protocol";

/** A refusal names the wire code its answer carries and the status it is sent with. */
export type SlotGrant =
  | { ok: true; release(): void }
  | { ok: false; code: ErrorCode; status: number; message: string };

export class StreamSlots {
  readonly #limits: StreamLimits;
  readonly #byClient = new Map<string, number>();
  #open = 0;

  constructor(limits: StreamLimits) {
    this.#limits = limits;
  }

  get open(): number {
    return this.#open;
  }

  take(client: string): SlotGrant {
    const held = this.#byClient.get(client) ?? 0;
    if (held >= this.#limits.perClient) {
      return {
        ok: false,
        ...HttpRefusal.tooManyStreams,
        message: `Too Many Requests: ${client} already has the most open event streams one client may hold (${this.#limits.perClient}, [gateway] max_streams_per_client); close one first`,
      };
    }
    if (this.#open >= this.#limits.total) {
      return {
        ok: false,
        code: "server_unavailable",
        status: HTTP_STATUS_BY_CODE.server_unavailable,
        message: `Service Unavailable: this server holds its maximum of ${this.#limits.total} open event streams ([gateway] max_streams); retry later`,
      };
    }
    this.#open += 1;
    this.#byClient.set(client, held + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.#open -= 1;
        const now = (this.#byClient.get(client) ?? 1) - 1;
        if (now === 0) this.#byClient.delete(client);
        else this.#byClient.set(client, now);
      },
    };
  }
}
