/**
 * "Allow and don't ask me again" grants, in Postgres table `approval_grants`: one row per
 * persistent key (`<server>.<connector>.<tool>`), bound to the tool fingerprint it was given for.
 * A later grant for the same key replaces the earlier one.
 */

import type { Grant } from "@toolbus/policy";
import type pg from "pg";
import type { GrantRecord, GrantStore } from "../../ports.js";

export class PgPersistentGrants implements GrantStore {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async get(key: string): Promise<Grant | undefined> {
    const { rows } = await this.#pool.query<{ fingerprint: string }>(
      "SELECT fingerprint FROM approval_grants WHERE grant_key = $1",
      [key],
    );
    return rows[0] && { fingerprint: rows[0].fingerprint };
  }

  async put(key: string, grant: GrantRecord): Promise<void> {
    await this.#pool.query(
      `INSERT INTO approval_grants (grant_key, fingerprint, granted_at, request_id)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (grant_key) DO UPDATE
         SET fingerprint = EXCLUDED.fingerprint, granted_at = EXCLUDED.granted_at, request_id = EXCLUDED.request_id`,
      [key, grant.fingerprint, grant.grantedAt, grant.requestId],
    );
  }
}
