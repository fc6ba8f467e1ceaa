import { type CheckpointLedger, checkClaim, type ResumeClaim } from "../checkpoint-ledger.js";
import type { SqliteDatabase } from "./open-database.js";

/** Runs a statement the way the store runs its own: closed and abort checks, errors as `StoreError`s. */
export type SqliteGuard = <T>(signal: AbortSignal | undefined, fn: () => T) => T;

/** The SQLite store's ledger of resumed checkpoints: one `INSERT OR IGNORE` on the id, its own transaction. */
export class SqliteCheckpointLedger implements CheckpointLedger {
  readonly #insert;
  readonly #prune;
  readonly #guard: SqliteGuard;
  readonly #clock: () => number;

  constructor(db: SqliteDatabase, guard: SqliteGuard, clock: () => number) {
    this.#insert = db.prepare(
      "INSERT OR IGNORE INTO resumed_checkpoints (id, tenant_id, run_id, resumed_at, expires_at) VALUES (?, ?, ?, ?, ?)",
    );
    this.#prune = db.prepare("DELETE FROM resumed_checkpoints WHERE expires_at < ?");
    this.#guard = guard;
    this.#clock = clock;
  }

  async claim(claim: ResumeClaim, signal?: AbortSignal): Promise<boolean> {
    const { id, tenantId, runId, expiresAt } = checkClaim(claim);
    const now = this.#clock();
    return this.#guard(signal, () => {
      this.#prune.run(now);
      return this.#insert.run(id, tenantId, runId, now, Math.round(expiresAt)).changes === 1;
    });
  }
}
