import type { BundleHash, TenantId } from "../../protocol/index.js";
import type { AuditRow, BundleRow, TenantRow, VersionDetailRow, VersionRow } from "../store-rows.js";
import { tenantNotFound } from "../store-rules.js";
import { type Db, msOf, type PostgresQueries } from "./postgres-queries.js";

/**
 * What the PostgreSQL store lists and shows: tenants with their active version, rollout and shadow; a
 * tenant's versions; one version in detail; a bundle by hash; the audit log. Reads outside any write's
 * transaction, on the pool.
 */
export class PostgresReads {
  readonly #q: PostgresQueries;

  constructor(queries: PostgresQueries) {
    this.#q = queries;
  }

  async tenants(db: Db, only: TenantId | undefined): Promise<TenantRow[]> {
    const s = this.#q.schemaPrefix;
    const result = await db.query<TenantRow>(
      `SELECT t.id, ${msOf("t.created_at")} AS created_at, ${msOf("t.updated_at")} AS updated_at, t.active_version,
              v.bundle_hash AS active_hash,
              (SELECT max(version) FROM ${s}versions WHERE tenant_id = t.id) AS latest,
              (SELECT count(*) FROM ${s}versions WHERE tenant_id = t.id) AS count,
              r.version AS rollout_version, rv.bundle_hash AS rollout_hash, r.basis_points AS rollout_bp,
              ${msOf("r.started_at")} AS rollout_at, r.by AS rollout_by, sh.version AS shadow_version,
              sv.bundle_hash AS shadow_hash, ${msOf("sh.started_at")} AS shadow_at, sh.by AS shadow_by
         FROM ${s}tenants t LEFT JOIN ${s}versions v ON v.tenant_id = t.id AND v.version = t.active_version
           LEFT JOIN ${s}rollouts r ON r.tenant_id = t.id
           LEFT JOIN ${s}versions rv ON rv.tenant_id = t.id AND rv.version = r.version
           LEFT JOIN ${s}shadows sh ON sh.tenant_id = t.id
           LEFT JOIN ${s}versions sv ON sv.tenant_id = t.id AND sv.version = sh.version
         WHERE $1::text IS NULL OR t.id = $1 ORDER BY t.id COLLATE "C"`,
      [only ?? null],
    );
    return result.rows;
  }

  async versions(db: Db, tenantId: TenantId): Promise<VersionRow[]> {
    const known = await db.query(`SELECT 1 FROM ${this.#q.schemaPrefix}tenants WHERE id = $1`, [tenantId]);
    if (known.rowCount === 0) throw tenantNotFound(tenantId);
    return (
      await db.query<VersionRow>(`${this.#q.versionSelect} WHERE v.tenant_id = $1 ORDER BY v.version`, [tenantId])
    ).rows;
  }

  async versionDetail(db: Db, tenantId: TenantId, version: number | undefined): Promise<VersionDetailRow | undefined> {
    const result = await db.query<VersionDetailRow>(
      `SELECT v.tenant_id, v.version, v.bundle_hash, v.uploaded_by, ${msOf("v.uploaded_at")} AS uploaded_at, b.manifest,
              b.bytes, (t.active_version IS NOT DISTINCT FROM v.version)::int AS active,
              r.basis_points AS rollout_bp, (sh.version IS NOT NULL)::int AS shadow, v.config, v.gate_report,
              octet_length(b.source_map) AS source_map_bytes
         ${this.#q.versionFrom}
         WHERE v.tenant_id = $1 AND v.version = coalesce($2::bigint, t.active_version)`,
      [tenantId, version ?? null],
    );
    return result.rows[0];
  }

  async bundle(db: Db, hash: BundleHash): Promise<BundleRow | undefined> {
    const result = await db.query<BundleRow>(
      `SELECT hash, code, source_map, manifest, bytes, uploaded_by, ${msOf("uploaded_at")} AS uploaded_at
         FROM ${this.#q.schemaPrefix}bundles WHERE hash = $1`,
      [hash],
    );
    return result.rows[0];
  }

  async audit(db: Db, tenantId: TenantId | undefined, limit: number): Promise<AuditRow[]> {
    const result = await db.query<AuditRow>(
      `SELECT * FROM (SELECT id, ${msOf("at")} AS at, tenant_id, type, version, from_version, bundle_hash, by, detail
                        FROM ${this.#q.schemaPrefix}audit WHERE $1::text IS NULL OR tenant_id = $1 ORDER BY id DESC LIMIT $2) a
         ORDER BY id`,
      [tenantId ?? null, limit],
    );
    return result.rows;
  }
}
