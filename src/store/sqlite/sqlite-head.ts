import type { BundleHash, TenantId } from "../../protocol/index.js";
import type { CodeRow, HeadRow } from "../store-rows.js";
import type { SqliteQueries } from "./sqlite-queries.js";

/**
 * What the SQLite store's active-bundle cache reads: a tenant's head (its active version with its rollout
 * and shadow candidates), a bundle's code by hash, and the staleness check between the two.
 */
export class SqliteHeadQueries {
  readonly #q: SqliteQueries;

  constructor(queries: SqliteQueries) {
    this.#q = queries;
  }

  /** Changes when another connection commits: the cheap staleness check behind `active()`. */
  dataVersion(): number {
    return Number(this.#q.one("PRAGMA data_version", true).get());
  }

  /** The active version with its rollout and shadow candidates: one indexed query. */
  head(tenantId: TenantId): HeadRow | undefined {
    return this.#q
      .one(
        `SELECT v.version, v.bundle_hash AS hash, v.config,
              r.version AS rollout_version, rv.bundle_hash AS rollout_hash, rv.config AS rollout_config,
              r.basis_points AS rollout_bp, s.version AS shadow_version, sv.bundle_hash AS shadow_hash,
              sv.config AS shadow_config
         FROM tenants t JOIN versions v ON v.tenant_id = t.id AND v.version = t.active_version
           LEFT JOIN rollouts r ON r.tenant_id = t.id LEFT JOIN versions rv ON rv.tenant_id = t.id AND rv.version = r.version
           LEFT JOIN shadows s ON s.tenant_id = t.id LEFT JOIN versions sv ON sv.tenant_id = t.id AND sv.version = s.version
         WHERE t.id = ?`,
      )
      .get(tenantId) as HeadRow | undefined;
  }

  code(hash: BundleHash): CodeRow | undefined {
    return this.#q.one("SELECT code, source_map, manifest, bytes FROM bundles WHERE hash = ?").get(hash) as
      | CodeRow
      | undefined;
  }
}
