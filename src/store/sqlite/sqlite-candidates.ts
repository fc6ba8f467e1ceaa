import type { TenantId } from "../../protocol/index.js";
import type { RolloutResult, ShadowResult } from "../bundle-store.js";
import { type CheckedRollout, percentOf } from "../store-inputs.js";
import { candidateIsActive, noActive, shareDetail } from "../store-rules.js";
import type { SqliteDatabase } from "./open-database.js";
import type { SqliteQueries } from "./sqlite-queries.js";

/**
 * The SQLite store's rollout and shadow writes: each in a `BEGIN IMMEDIATE` transaction, like every write
 * of SqliteQueries; a change touches the tenant's row and writes its audit row, and other connections see
 * it through `data_version`, like an activation.
 */
export class SqliteCandidateQueries {
  readonly #db: SqliteDatabase;
  readonly #q: SqliteQueries;

  constructor(db: SqliteDatabase, queries: SqliteQueries) {
    this.#db = db;
    this.#q = queries;
  }

  rollout(r: CheckedRollout, at: number): RolloutResult {
    const { tenantId, version, basisPoints, by } = r;
    return this.#db
      .transaction((): RolloutResult => {
        const active = this.#q.activeVersion(tenantId);
        const hash = this.#q.hashOf(tenantId, version);
        if (active === null) throw noActive(tenantId);
        const before = this.#q.one("SELECT version, basis_points FROM rollouts WHERE tenant_id = ?").get(tenantId) as
          | { version: number; basis_points: number }
          | undefined;
        const previous = before ? { version: before.version, percent: percentOf(before.basis_points) } : null;
        const percent = percentOf(basisPoints);
        if (basisPoints === 10_000) {
          const { changed } = this.#q.activateInTransaction(tenantId, version, by, at, true);
          return { tenantId, version, percent, activeVersion: version, previous, activated: changed, changed };
        }
        if (version === active) throw candidateIsActive(tenantId, version, "roll out");
        const changed = before?.version !== version || before.basis_points !== basisPoints;
        if (changed) {
          this.#q
            .one(
              `INSERT INTO rollouts (tenant_id, version, basis_points, started_at, by) VALUES (?, ?, ?, ?, ?)
               ON CONFLICT (tenant_id) DO UPDATE SET version = excluded.version, basis_points = excluded.basis_points,
                 started_at = excluded.started_at, by = excluded.by`,
            )
            .run(tenantId, version, basisPoints, at, by);
          this.#q.touch(tenantId, at);
          this.#q.writeAudit(at, tenantId, "rollout", version, active, hash, by, shareDetail(basisPoints));
        }
        return { tenantId, version, percent, activeVersion: active, previous, activated: false, changed };
      })
      .immediate();
  }

  shadow(tenantId: TenantId, version: number | null, by: string, at: number): ShadowResult {
    return this.#db
      .transaction((): ShadowResult => {
        const active = this.#q.activeVersion(tenantId);
        const previous =
          (this.#q.one("SELECT version FROM shadows WHERE tenant_id = ?", true).get(tenantId) as number | undefined) ??
          null;
        if (version === null) {
          if (previous === null) return { tenantId, version, previous, changed: false };
          this.#q.one("DELETE FROM shadows WHERE tenant_id = ?").run(tenantId);
          this.#q.touch(tenantId, at);
          this.#q.writeAudit(at, tenantId, "shadow_off", previous, null, this.#q.hashOf(tenantId, previous), by);
          return { tenantId, version, previous, changed: true };
        }
        const hash = this.#q.hashOf(tenantId, version);
        if (active === null) throw noActive(tenantId);
        if (version === active) throw candidateIsActive(tenantId, version, "shadow");
        if (previous === version) return { tenantId, version, previous, changed: false };
        this.#q
          .one(
            `INSERT INTO shadows (tenant_id, version, started_at, by) VALUES (?, ?, ?, ?)
             ON CONFLICT (tenant_id) DO UPDATE SET version = excluded.version, started_at = excluded.started_at, by = excluded.by`,
          )
          .run(tenantId, version, at, by);
        this.#q.touch(tenantId, at);
        this.#q.writeAudit(at, tenantId, "shadow", version, active, hash, by);
        return { tenantId, version, previous, changed: true };
      })
      .immediate();
  }
}
