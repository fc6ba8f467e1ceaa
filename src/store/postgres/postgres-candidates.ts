import type { PoolClient } from "pg";
import type { TenantId } from "../../protocol/index.js";
import type { RolloutResult, ShadowResult } from "../bundle-store.js";
import { type CheckedRollout, percentOf } from "../store-inputs.js";
import { candidateIsActive, noActive, shareDetail } from "../store-rules.js";
import { notifyHeadSql } from "./postgres-head.js";
import type { PostgresQueries } from "./postgres-queries.js";

/**
 * The PostgreSQL store's rollout and shadow writes: each in the caller's transaction, after the tenant's
 * row is locked; a change bumps `store_state.generation` and notifies the tenant on commit, like an
 * activation, so hosts pick it up the same way.
 */
export class PostgresCandidateQueries {
  readonly #q: PostgresQueries;

  constructor(queries: PostgresQueries) {
    this.#q = queries;
  }

  async rollout(c: PoolClient, r: CheckedRollout, at: Date): Promise<RolloutResult> {
    const s = this.#q.schemaPrefix;
    const { tenantId, version, basisPoints, by } = r;
    const active = await this.#q.lockTenant(c, tenantId);
    const hash = await this.#q.hashOf(c, tenantId, version);
    if (active === null) throw noActive(tenantId);
    const found = await c.query<{ version: number; basis_points: number }>(
      `SELECT version, basis_points FROM ${s}rollouts WHERE tenant_id = $1`,
      [tenantId],
    );
    const before = found.rows[0];
    const previous = before ? { version: before.version, percent: percentOf(before.basis_points) } : null;
    const percent = percentOf(basisPoints);
    if (basisPoints === 10_000) {
      const { changed } = await this.#q.activate(c, tenantId, version, by, at, true);
      return { tenantId, version, percent, activeVersion: version, previous, activated: changed, changed };
    }
    if (version === active) throw candidateIsActive(tenantId, version, "roll out");
    const changed = before?.version !== version || before.basis_points !== basisPoints;
    if (changed) {
      await c.query(
        `INSERT INTO ${s}rollouts (tenant_id, version, basis_points, started_at, by) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (tenant_id) DO UPDATE SET version = excluded.version, basis_points = excluded.basis_points,
             started_at = excluded.started_at, by = excluded.by`,
        [tenantId, version, basisPoints, at, by],
      );
      await this.#q.writeAudit(c, at, tenantId, "rollout", version, active, hash, by, shareDetail(basisPoints));
      await this.#changed(c, tenantId, at);
    }
    return { tenantId, version, percent, activeVersion: active, previous, activated: false, changed };
  }

  async shadow(c: PoolClient, tenantId: TenantId, version: number | null, by: string, at: Date): Promise<ShadowResult> {
    const s = this.#q.schemaPrefix;
    const active = await this.#q.lockTenant(c, tenantId);
    const found = await c.query<{ version: number }>(`SELECT version FROM ${s}shadows WHERE tenant_id = $1`, [
      tenantId,
    ]);
    const previous = found.rows[0]?.version ?? null;
    if (version === null) {
      if (previous === null) return { tenantId, version, previous, changed: false };
      await c.query(`DELETE FROM ${s}shadows WHERE tenant_id = $1`, [tenantId]);
      await this.#q.writeAudit(
        c,
        at,
        tenantId,
        "shadow_off",
        previous,
        null,
        await this.#q.hashOf(c, tenantId, previous),
        by,
      );
      await this.#changed(c, tenantId, at);
      return { tenantId, version, previous, changed: true };
    }
    const hash = await this.#q.hashOf(c, tenantId, version);
    if (active === null) throw noActive(tenantId);
    if (version === active) throw candidateIsActive(tenantId, version, "shadow");
    if (previous === version) return { tenantId, version, previous, changed: false };
    await c.query(
      `INSERT INTO ${s}shadows (tenant_id, version, started_at, by) VALUES ($1, $2, $3, $4)
         ON CONFLICT (tenant_id) DO UPDATE SET version = excluded.version, started_at = excluded.started_at, by = excluded.by`,
      [tenantId, version, at, by],
    );
    await this.#q.writeAudit(c, at, tenantId, "shadow", version, active, hash, by);
    await this.#changed(c, tenantId, at);
    return { tenantId, version, previous, changed: true };
  }

  /** A candidate changed: the tenant's row, the store's generation, and the notification on commit. */
  async #changed(c: PoolClient, tenantId: TenantId, at: Date): Promise<void> {
    const s = this.#q.schemaPrefix;
    await c.query(
      `WITH tenant AS (UPDATE ${s}tenants SET updated_at = $2 WHERE id = $1),
            bumped AS (UPDATE ${s}store_state SET generation = generation + 1)
       ${notifyHeadSql(s, "$3")}`,
      [tenantId, at, this.#q.channel],
    );
  }
}
