import type { Pool } from "pg";
import { type CheckpointLedger, checkClaim, type ResumeClaim } from "../checkpoint-ledger.js";
import { pgStoreError } from "./postgres-errors.js";

/**
 * The PostgreSQL store's ledger of resumed checkpoints: one `INSERT … ON CONFLICT DO NOTHING` on the id,
 * a transaction of its own, never retried (a retry after a lost reply would find its own row and refuse).
 */
export class PostgresCheckpointLedger implements CheckpointLedger {
  readonly #table: string;
  readonly #pool: Pool;
  readonly #location: string;
  readonly #open: (signal: AbortSignal | undefined) => void;

  constructor(schema: string, pool: Pool, location: string, open: (signal: AbortSignal | undefined) => void) {
    this.#table = `"${schema}".resumed_checkpoints`;
    this.#pool = pool;
    this.#location = location;
    this.#open = open;
  }

  async claim(claim: ResumeClaim, signal?: AbortSignal): Promise<boolean> {
    const { id, tenantId, runId, expiresAt } = checkClaim(claim);
    this.#open(signal);
    try {
      // Expired ids go first, in a statement of their own (an index range, usually empty).
      await this.#pool.query(`DELETE FROM ${this.#table} WHERE expires_at < now()`);
      const result = await this.#pool.query(
        `INSERT INTO ${this.#table} (id, tenant_id, run_id, expires_at) VALUES ($1, $2, $3, to_timestamp($4 / 1000.0))
           ON CONFLICT (id) DO NOTHING`,
        [id, tenantId, runId, Math.round(expiresAt)],
      );
      return result.rowCount === 1;
    } catch (error) {
      throw pgStoreError(error, this.#location);
    }
  }
}
