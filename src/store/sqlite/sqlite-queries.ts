import type { BundleHash, TenantId } from "../../protocol/index.js";
import type {
  ActivationResult,
  AuditEntry,
  AuditType,
  StoredBundle,
  TenantSummary,
  VersionDetail,
  VersionRecord,
} from "../bundle-store.js";
import { type CheckedUpload, percentOf, type UploadStep } from "../store-inputs.js";
import {
  type AuditRow,
  type BundleRow,
  type TenantRow,
  toAuditEntry,
  toStoredBundle,
  toTenantSummary,
  toVersionDetail,
  toVersionRecord,
  type VersionDetailRow,
  type VersionRow,
} from "../store-rows.js";
import {
  activeVersionError,
  noPrevious,
  rolloutEndDetail,
  tenantNotFound,
  versionInUse,
  versionNotFound,
} from "../store-rules.js";
import type { SqliteDatabase, Statement } from "./open-database.js";

const VERSION_FROM = `
  FROM versions v JOIN bundles b ON b.hash = v.bundle_hash JOIN tenants t ON t.id = v.tenant_id
  LEFT JOIN rollouts r ON r.tenant_id = v.tenant_id AND r.version = v.version
  LEFT JOIN shadows s ON s.tenant_id = v.tenant_id AND s.version = v.version`;

const VERSION_SELECT = `
  SELECT v.tenant_id, v.version, v.bundle_hash, v.uploaded_by, v.uploaded_at, b.manifest, b.bytes,
         (t.active_version IS v.version) AS active, r.basis_points AS rollout_bp, (s.version IS NOT NULL) AS shadow
  ${VERSION_FROM}`;

const VERSION_DETAIL_SELECT = `
  SELECT v.tenant_id, v.version, v.bundle_hash, v.uploaded_by, v.uploaded_at, b.manifest, b.bytes,
         (t.active_version IS v.version) AS active, r.basis_points AS rollout_bp, (s.version IS NOT NULL) AS shadow,
         v.config, v.gate_report, length(CAST(b.source_map AS BLOB)) AS source_map_bytes
  ${VERSION_FROM}`;

/**
 * The SQLite store's statements for versions (upload, activation, rollback, delete) and its reads, each
 * prepared once; rollouts and shadows are in sqlite-candidates.ts, the active-bundle cache's reads in
 * sqlite-head.ts, both through `one`. Values go in as parameters only: no SQL is ever built from input.
 * Write methods run in `BEGIN IMMEDIATE` transactions: the write lock is taken before anything is read,
 * so a version number is allocated under the lock.
 */
export class SqliteQueries {
  readonly #db: SqliteDatabase;
  readonly #statements = new Map<string, Statement>();

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  upload(
    u: CheckedUpload,
    at: number,
    step: ((step: UploadStep) => void) | undefined,
  ): { version: number; bundleCreated: boolean; activated: boolean } {
    const db = this.#db;
    return db
      .transaction(() => {
        this.one("INSERT INTO tenants (id, created_at, updated_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING").run(
          u.tenantId,
          at,
          at,
        );
        const version = Number(
          this.one(
            "UPDATE tenants SET next_version = next_version + 1, updated_at = ? WHERE id = ? RETURNING next_version - 1",
            true,
          ).get(at, u.tenantId),
        );
        step?.("tenant");
        const bundleCreated =
          this.one(
            `INSERT INTO bundles (hash, code, source_map, manifest, bytes, uploaded_by, uploaded_at)
               VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING`,
          ).run(u.hash, u.code, u.sourceMap, u.manifestJson, u.bytes, u.by, at).changes === 1;
        step?.("bundle");
        const config =
          u.configJson ??
          (this.one("SELECT config FROM versions WHERE tenant_id = ? ORDER BY version DESC LIMIT 1", true).get(
            u.tenantId,
          ) as string | undefined) ??
          "{}";
        this.one(
          `INSERT INTO versions (tenant_id, version, bundle_hash, config, gate_report, uploaded_by, uploaded_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        ).run(u.tenantId, version, u.hash, config, u.gateReportJson, u.by, at);
        this.writeAudit(at, u.tenantId, "upload", version, null, u.hash, u.by);
        step?.("version");
        let activated = false;
        if (u.activate) {
          activated = this.activateInTransaction(u.tenantId, version, u.by, at).changed;
          step?.("activation");
        }
        return { version, bundleCreated, activated };
      })
      .immediate();
  }

  activate(tenantId: TenantId, version: number, by: string, at: number): ActivationResult {
    return this.#db.transaction(() => this.activateInTransaction(tenantId, version, by, at)).immediate();
  }

  rollback(tenantId: TenantId, by: string, at: number): ActivationResult {
    const db = this.#db;
    return db
      .transaction((): ActivationResult => {
        const current = this.activeVersion(tenantId);
        if (current === null) throw noPrevious(tenantId);
        const ended = this.#endRollout(tenantId);
        if (ended) {
          this.touch(tenantId, at);
          const detail = rolloutEndDetail(ended);
          this.writeAudit(at, tenantId, "rollback", current, ended.version, this.hashOf(tenantId, current), by, detail);
          return { tenantId, version: current, previous: current, changed: true, endedRollout: ended };
        }
        const target = this.one(
          "SELECT seq, version FROM activations WHERE tenant_id = ? AND version != ? ORDER BY seq DESC LIMIT 1",
        ).get(tenantId, current) as { seq: number; version: number } | undefined;
        if (!target) throw noPrevious(tenantId);
        this.one("DELETE FROM activations WHERE tenant_id = ? AND seq > ?").run(tenantId, target.seq);
        this.one("UPDATE tenants SET active_version = ?, updated_at = ? WHERE id = ?").run(
          target.version,
          at,
          tenantId,
        );
        this.writeAudit(at, tenantId, "rollback", target.version, current, this.hashOf(tenantId, target.version), by);
        return { tenantId, version: target.version, previous: current, changed: true, endedRollout: null };
      })
      .immediate();
  }

  deleteVersion(tenantId: TenantId, version: number, by: string, at: number): void {
    const db = this.#db;
    db.transaction(() => {
      const current = this.activeVersion(tenantId);
      const hash = this.hashOf(tenantId, version);
      if (current === version) throw activeVersionError(tenantId, version);
      if (this.one("SELECT 1 FROM rollouts WHERE tenant_id = ? AND version = ?").get(tenantId, version))
        throw versionInUse(tenantId, version, "rollout");
      if (this.one("SELECT 1 FROM shadows WHERE tenant_id = ? AND version = ?").get(tenantId, version))
        throw versionInUse(tenantId, version, "shadow");
      this.one("DELETE FROM versions WHERE tenant_id = ? AND version = ?").run(tenantId, version);
      this.one("DELETE FROM bundles WHERE hash = ? AND NOT EXISTS (SELECT 1 FROM versions WHERE bundle_hash = ?)").run(
        hash,
        hash,
      );
      this.one("UPDATE tenants SET updated_at = ? WHERE id = ?").run(at, tenantId);
      this.writeAudit(at, tenantId, "delete", version, null, hash, by);
    }).immediate();
  }

  tenants(only: TenantId | undefined): TenantSummary[] {
    const rows = this.one(
      `SELECT t.id, t.created_at, t.updated_at, t.active_version, v.bundle_hash AS active_hash,
                (SELECT max(version) FROM versions WHERE tenant_id = t.id) AS latest,
                (SELECT count(*) FROM versions WHERE tenant_id = t.id) AS count,
                r.version AS rollout_version, rv.bundle_hash AS rollout_hash, r.basis_points AS rollout_bp,
                r.started_at AS rollout_at, r.by AS rollout_by, s.version AS shadow_version,
                sv.bundle_hash AS shadow_hash, s.started_at AS shadow_at, s.by AS shadow_by
         FROM tenants t LEFT JOIN versions v ON v.tenant_id = t.id AND v.version = t.active_version
           LEFT JOIN rollouts r ON r.tenant_id = t.id LEFT JOIN versions rv ON rv.tenant_id = t.id AND rv.version = r.version
           LEFT JOIN shadows s ON s.tenant_id = t.id LEFT JOIN versions sv ON sv.tenant_id = t.id AND sv.version = s.version
         WHERE @only IS NULL OR t.id = @only ORDER BY t.id`,
    ).all({ only: only ?? null }) as TenantRow[];
    return rows.map(toTenantSummary);
  }

  versions(tenantId: TenantId): VersionRecord[] {
    this.activeVersion(tenantId);
    const rows = this.one(`${VERSION_SELECT} WHERE v.tenant_id = ? ORDER BY v.version`).all(tenantId) as VersionRow[];
    return rows.map(toVersionRecord);
  }

  versionRecord(tenantId: TenantId, version: number): VersionRecord | undefined {
    const row = this.one(`${VERSION_SELECT} WHERE v.tenant_id = ? AND v.version = ?`).get(tenantId, version) as
      | VersionRow
      | undefined;
    return row && toVersionRecord(row);
  }

  versionDetail(tenantId: TenantId, version: number | undefined): VersionDetail | undefined {
    const row = this.one(
      `${VERSION_DETAIL_SELECT}
         WHERE v.tenant_id = @tenant AND v.version = coalesce(@version, t.active_version)`,
    ).get({ tenant: tenantId, version: version ?? null }) as VersionDetailRow | undefined;
    return row && toVersionDetail(row);
  }

  bundle(hash: BundleHash): StoredBundle | undefined {
    const row = this.one(
      "SELECT hash, code, source_map, manifest, bytes, uploaded_by, uploaded_at FROM bundles WHERE hash = ?",
    ).get(hash) as BundleRow | undefined;
    return row && toStoredBundle(row);
  }

  audit(tenantId: TenantId | undefined, limit: number): AuditEntry[] {
    const rows = this.one(
      `SELECT * FROM (SELECT id, at, tenant_id, type, version, from_version, bundle_hash, by, detail FROM audit
                        WHERE @tenant IS NULL OR tenant_id = @tenant ORDER BY id DESC LIMIT @limit) ORDER BY id`,
    ).all({ tenant: tenantId ?? null, limit }) as AuditRow[];
    return rows.map(toAuditEntry);
  }

  /** One prepared statement per SQL text (and pluck mode), prepared on first use. */
  one(sql: string, pluck = false): Statement {
    const key = pluck ? `p:${sql}` : sql;
    let statement = this.#statements.get(key);
    if (!statement) {
      statement = this.#db.prepare(sql);
      if (pluck) statement.pluck();
      this.#statements.set(key, statement);
    }
    return statement;
  }

  /**
   * Activates `version` in the caller's transaction, ending any rollout; `completing` marks the activation
   * `rollout --percent 100` makes.
   */
  activateInTransaction(
    tenantId: TenantId,
    version: number,
    by: string,
    at: number,
    completing = false,
  ): ActivationResult {
    const current = this.activeVersion(tenantId);
    const hash = this.hashOf(tenantId, version);
    const endedRollout = this.#endRollout(tenantId);
    if (current === version) {
      if (!endedRollout) return { tenantId, version, previous: current, changed: false, endedRollout };
      this.touch(tenantId, at);
      this.writeAudit(at, tenantId, "activate", version, current, hash, by, rolloutEndDetail(endedRollout, completing));
      return { tenantId, version, previous: current, changed: true, endedRollout };
    }
    const seq = Number(
      this.one("SELECT coalesce(max(seq), 0) + 1 FROM activations WHERE tenant_id = ?", true).get(tenantId),
    );
    this.one("INSERT INTO activations (tenant_id, seq, version) VALUES (?, ?, ?)").run(tenantId, seq, version);
    this.one("UPDATE tenants SET active_version = ?, updated_at = ? WHERE id = ?").run(version, at, tenantId);
    this.writeAudit(at, tenantId, "activate", version, current, hash, by, rolloutEndDetail(endedRollout, completing));
    return { tenantId, version, previous: current, changed: true, endedRollout };
  }

  /** Deletes the tenant's rollout, if any, and says what it was. */
  #endRollout(tenantId: TenantId): { version: number; percent: number } | null {
    const row = this.one("DELETE FROM rollouts WHERE tenant_id = ? RETURNING version, basis_points").get(tenantId) as
      | { version: number; basis_points: number }
      | undefined;
    return row ? { version: row.version, percent: percentOf(row.basis_points) } : null;
  }

  touch(tenantId: TenantId, at: number): void {
    this.one("UPDATE tenants SET updated_at = ? WHERE id = ?").run(at, tenantId);
  }

  /** The tenant's active version (null if none); rejects with not_found for an unknown tenant. */
  activeVersion(tenantId: TenantId): number | null {
    const row = this.one("SELECT active_version FROM tenants WHERE id = ?").get(tenantId) as
      | { active_version: number | null }
      | undefined;
    if (!row) throw tenantNotFound(tenantId);
    return row.active_version;
  }

  hashOf(tenantId: TenantId, version: number): BundleHash {
    const hash = this.one("SELECT bundle_hash FROM versions WHERE tenant_id = ? AND version = ?", true).get(
      tenantId,
      version,
    ) as BundleHash | undefined;
    if (hash === undefined) throw versionNotFound(tenantId, version);
    return hash;
  }

  /** Writes one audit row in the caller's transaction. */
  writeAudit(
    at: number,
    tenantId: TenantId,
    type: AuditType,
    version: number,
    fromVersion: number | null,
    hash: BundleHash | null,
    by: string,
    detail?: string,
  ): void {
    this.one(
      `INSERT INTO audit (at, tenant_id, type, version, from_version, bundle_hash, by, detail)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(at, tenantId, type, version, fromVersion, hash, by, detail ?? null);
  }
}
