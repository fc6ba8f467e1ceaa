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
    const result = await db.query<HeadRow>(this.#headSql(), [tenantId]);
    return result.rows[0];
  }

  /**
   * The head and, in the same round trip, the code of each of its versions whose hash is not in `known`:
   * a pick-up of a version this host has not run yet costs one query, not two.
   */
  async headAndCode(
    db: Db,
    tenantId: TenantId,
    known: readonly BundleHash[],
  ): Promise<(HeadRow & { codes: (CodeRow & { hash: BundleHash })[] | null }) | undefined> {
    const s = this.#q.schemaPrefix;
    const result = await db.query<HeadRow & { codes: (CodeRow & { hash: BundleHash })[] | null }>(
      `WITH h AS (${this.#headSql()})
       SELECT h.*, (SELECT json_agg(json_build_object('hash', b.hash, 'code', b.code, 'source_map', b.source_map,
                                                      'manifest', b.manifest, 'bytes', b.bytes))
                      FROM ${s}bundles b
                     WHERE b.hash IN (h.hash, h.rollout_hash, h.shadow_hash) AND NOT (b.hash = ANY($2::text[]))) AS codes
         FROM h`,
      [tenantId, known],
    );
    return result.rows[0];
  }

  #headSql(): string {
    const s = this.#q.schemaPrefix;
    return `SELECT v.version, v.bundle_hash AS hash, v.config,
              r.version AS rollout_version, rv.bundle_hash AS rollout_hash, rv.config AS rollout_config,
              r.basis_points AS rollout_bp, sh.version AS shadow_version, sv.bundle_hash AS shadow_hash,
              sv.config AS shadow_config
         FROM ${s}tenants t JOIN ${s}versions v ON v.tenant_id = t.id AND v.version = t.active_version
           LEFT JOIN ${s}rollouts r ON r.tenant_id = t.id
           LEFT JOIN ${s}versions rv ON rv.tenant_id = t.id AND rv.version = r.version
           LEFT JOIN ${s}shadows sh ON sh.tenant_id = t.id
           LEFT JOIN ${s}versions sv ON sv.tenant_id = t.id AND sv.version = sh.version
         WHERE t.id = $1`;
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
