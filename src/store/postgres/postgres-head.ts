import type { BundleHash, TenantId } from "../../protocol/index.js";
import type { CodeRow, HeadRow } from "../store-rows.js";
import type { Db, PostgresQueries } from "./postgres-queries.js";

/**
 * What the PostgreSQL store's active-bundle cache reads: a tenant's head (its active version with its
 * rollout and shadow candidates, in one query), a bundle's code by hash, and the store's generation that
 * the change feed polls while its notification connection is down.
 */
export class PostgresHeadQueries {
  readonly #q: PostgresQueries;

  constructor(queries: PostgresQueries) {
    this.#q = queries;
  }

  async head(db: Db, tenantId: TenantId): Promise<HeadRow | undefined> {
    const s = this.#q.schemaPrefix;
    const result = await db.query<HeadRow>(
      `SELECT v.version, v.bundle_hash AS hash, v.config,
              r.version AS rollout_version, rv.bundle_hash AS rollout_hash, rv.config AS rollout_config,
              r.basis_points AS rollout_bp, sh.version AS shadow_version, sv.bundle_hash AS shadow_hash,
              sv.config AS shadow_config
         FROM ${s}tenants t JOIN ${s}versions v ON v.tenant_id = t.id AND v.version = t.active_version
           LEFT JOIN ${s}rollouts r ON r.tenant_id = t.id
           LEFT JOIN ${s}versions rv ON rv.tenant_id = t.id AND rv.version = r.version
           LEFT JOIN ${s}shadows sh ON sh.tenant_id = t.id
           LEFT JOIN ${s}versions sv ON sv.tenant_id = t.id AND sv.version = sh.version
         WHERE t.id = $1`,
      [tenantId],
    );
    return result.rows[0];
  }

  async code(db: Db, hash: BundleHash): Promise<CodeRow | undefined> {
    const result = await db.query<CodeRow>(
      `SELECT code, source_map, manifest, bytes FROM ${this.#q.schemaPrefix}bundles WHERE hash = $1`,
      [hash],
    );
    return result.rows[0];
  }

  /** Moves whenever an active version changes: the fallback's cheap staleness check. */
  async generation(db: Db): Promise<number> {
    const result = await db.query<{ generation: number }>(`SELECT generation FROM ${this.#q.schemaPrefix}store_state`);
    return result.rows[0]?.generation ?? 0;
  }
}
