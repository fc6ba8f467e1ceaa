import type { Pool, PoolClient } from "pg";
import type { BundleHash, TenantId } from "../../protocol/index.js";
import type { ActivationResult, AuditType, VersionRecord } from "../bundle-store.js";
import { type CheckedUpload, percentOf, type UploadStep } from "../store-inputs.js";
import { toVersionRecord, type VersionRow } from "../store-rows.js";
import {
  activeVersionError,
  noPrevious,
  rolloutEndDetail,
  tenantNotFound,
  versionInUse,
  versionNotFound,
} from "../store-rules.js";
import { notifyHeadSql } from "./postgres-head.js";

export type Db = Pool | PoolClient;

/** A timestamp column as epoch ms, the form the row types (store-rows.ts) hold times in. */
export const msOf = (column: string) => `(extract(epoch FROM ${column}) * 1000)::bigint`;

/**
 * The PostgreSQL store's statements for versions (upload, activation, rollback, delete); its listing reads
 * are in postgres-reads.ts, rollouts and shadows in postgres-candidates.ts, the active-bundle cache's reads
 * in postgres-head.ts.
 * Values go in as parameters only; the one name built into the SQL is the schema, validated as a
 * lowercase identifier (see storeLocation). Writes run in
 * transactions that lock the tenant's row first, so a version number is allocated and an activation
 * decided under that lock; a change of an active version bumps `store_state.generation` and notifies
 * the store's channel, both delivered only if the transaction commits.
 */
export class PostgresQueries {
  readonly channel: string;
  /** `"schema".`: what every table name is prefixed with. */
  readonly schemaPrefix: string;
  /** A version row's columns (store-rows.ts `VersionRow`) and what they are read from, for the reads. */
  readonly versionSelect: string;
  readonly versionFrom: string;
  readonly #s: string;

  constructor(schema: string) {
    this.#s = `"${schema}".`;
    this.schemaPrefix = this.#s;
    this.channel = `isohook:${schema}`;
    const s = this.#s;
    this.versionFrom = `FROM ${s}versions v JOIN ${s}bundles b ON b.hash = v.bundle_hash JOIN ${s}tenants t ON t.id = v.tenant_id
      LEFT JOIN ${s}rollouts r ON r.tenant_id = v.tenant_id AND r.version = v.version
      LEFT JOIN ${s}shadows sh ON sh.tenant_id = v.tenant_id AND sh.version = v.version`;
    this.versionSelect = `
      SELECT v.tenant_id, v.version, v.bundle_hash, v.uploaded_by, ${msOf("v.uploaded_at")} AS uploaded_at, b.manifest,
             b.bytes, (t.active_version IS NOT DISTINCT FROM v.version)::int AS active,
             r.basis_points AS rollout_bp, (sh.version IS NOT NULL)::int AS shadow
      ${this.versionFrom}`;
  }

  async upload(
    c: PoolClient,
    u: CheckedUpload,
    at: Date,
    step: ((step: UploadStep) => void | Promise<void>) | undefined,
  ): Promise<{ version: VersionRecord; bundleCreated: boolean; activated: boolean }> {
    const s = this.#s;
    // Creates the tenant or takes its row lock, allocating the version in the same statement.
    const allocated = await c.query<{ version: number }>(
      `INSERT INTO ${s}tenants AS t (id, created_at, updated_at, next_version) VALUES ($1, $2, $2, 2)
         ON CONFLICT (id) DO UPDATE SET next_version = t.next_version + 1, updated_at = $2
         RETURNING t.next_version - 1 AS version`,
      [u.tenantId, at],
    );
    const version = allocated.rows[0]?.version;
    if (version === undefined) throw tenantNotFound(u.tenantId);
    await step?.("tenant");
    const bundleCreated = await this.#putBundle(c, u, at);
    await step?.("bundle");
    await c.query(
      `WITH added AS (
         INSERT INTO ${s}versions (tenant_id, version, bundle_hash, config, gate_report, uploaded_by, uploaded_at)
         VALUES ($1, $2, $3, coalesce($4, (SELECT config FROM ${s}versions WHERE tenant_id = $1
                                           ORDER BY version DESC LIMIT 1), '{}'), $5, $6, $7))
       INSERT INTO ${s}audit (at, tenant_id, type, version, from_version, bundle_hash, by)
       VALUES ($7, $1, 'upload', $2, NULL, $3, $6)`,
      [u.tenantId, version, u.hash, u.configJson ?? null, u.gateReportJson, u.by, at],
    );
    await step?.("version");
    let activated = false;
    if (u.activate) {
      activated = (await this.activate(c, u.tenantId, version, u.by, at)).changed;
      await step?.("activation");
    }
    const record = await this.versionRecord(c, u.tenantId, version);
    if (!record) throw versionNotFound(u.tenantId, version);
    return { version: record, bundleCreated, activated };
  }

  async activate(
    c: PoolClient,
    tenantId: TenantId,
    version: number,
    by: string,
    at: Date,
    completing = false,
  ): Promise<ActivationResult> {
    const s = this.#s;
    const found = await c.query<{
      active_version: number | null;
      hash: BundleHash | null;
      rollout_version: number | null;
      rollout_bp: number | null;
    }>(
      `SELECT t.active_version, v.bundle_hash AS hash, r.version AS rollout_version, r.basis_points AS rollout_bp
         FROM ${s}tenants t LEFT JOIN ${s}versions v ON v.tenant_id = t.id AND v.version = $2
           LEFT JOIN ${s}rollouts r ON r.tenant_id = t.id
         WHERE t.id = $1 FOR UPDATE OF t`,
      [tenantId, version],
    );
    const row = found.rows[0];
    if (!row) throw tenantNotFound(tenantId);
    if (row.hash === null) throw versionNotFound(tenantId, version);
    const current = row.active_version;
    const endedRollout =
      row.rollout_version === null
        ? null
        : { version: row.rollout_version, percent: percentOf(Number(row.rollout_bp)) };
    if (current === version && !endedRollout) {
      return { tenantId, version, previous: current, changed: false, endedRollout };
    }
    const history =
      current === version
        ? "SELECT 1"
        : `INSERT INTO ${s}activations (tenant_id, seq, version)
             SELECT $1, coalesce(max(seq), 0) + 1, $2 FROM ${s}activations WHERE tenant_id = $1`;
    const detail = rolloutEndDetail(endedRollout, completing);
    const change = { tenantId, version, from: current, hash: row.hash, type: "activate", by, at, detail } as const;
    await this.#switch(c, history, [], change);
    return { tenantId, version, previous: current, changed: true, endedRollout };
  }

  async rollback(c: PoolClient, tenantId: TenantId, by: string, at: Date): Promise<ActivationResult> {
    const s = this.#s;
    const current = await this.lockTenant(c, tenantId);
    if (current === null) throw noPrevious(tenantId);
    const rollout = await c.query<{ version: number; basis_points: number }>(
      `SELECT version, basis_points FROM ${s}rollouts WHERE tenant_id = $1`,
      [tenantId],
    );
    const ended = rollout.rows[0];
    if (ended) {
      const hash = await this.hashOf(c, tenantId, current);
      const endedRollout = { version: ended.version, percent: percentOf(ended.basis_points) };
      const detail = rolloutEndDetail(endedRollout);
      const change = {
        tenantId,
        version: current,
        from: ended.version,
        hash,
        type: "rollback",
        by,
        at,
        detail,
      } as const;
      await this.#switch(c, "SELECT 1", [], change);
      return { tenantId, version: current, previous: current, changed: true, endedRollout };
    }
    const found = await c.query<{ seq: number; version: number; hash: BundleHash }>(
      `SELECT a.seq, a.version, v.bundle_hash AS hash FROM ${s}activations a
         JOIN ${s}versions v ON v.tenant_id = a.tenant_id AND v.version = a.version
         WHERE a.tenant_id = $1 AND a.version != $2 ORDER BY a.seq DESC LIMIT 1`,
      [tenantId, current],
    );
    const target = found.rows[0];
    if (!target) throw noPrevious(tenantId);
    const history = `DELETE FROM ${s}activations WHERE tenant_id = $1 AND seq > $10`;
    await this.#switch(c, history, [target.seq], {
      tenantId,
      version: target.version,
      from: current,
      hash: target.hash,
      type: "rollback",
      by,
      at,
    });
    return { tenantId, version: target.version, previous: current, changed: true, endedRollout: null };
  }

  async deleteVersion(c: PoolClient, tenantId: TenantId, version: number, by: string, at: Date): Promise<void> {
    const s = this.#s;
    const current = await this.lockTenant(c, tenantId);
    const hash = await this.hashOf(c, tenantId, version);
    if (current === version) throw activeVersionError(tenantId, version);
    const roles = await c.query<{ role: "rollout" | "shadow" }>(
      `SELECT 'rollout' AS role FROM ${s}rollouts WHERE tenant_id = $1 AND version = $2
       UNION ALL SELECT 'shadow' FROM ${s}shadows WHERE tenant_id = $1 AND version = $2`,
      [tenantId, version],
    );
    const role = roles.rows[0]?.role;
    if (role !== undefined) throw versionInUse(tenantId, version, role);
    await c.query(`DELETE FROM ${s}versions WHERE tenant_id = $1 AND version = $2`, [tenantId, version]);
    await c.query(
      `DELETE FROM ${s}bundles b WHERE b.hash = $1 AND NOT EXISTS (SELECT 1 FROM ${s}versions WHERE bundle_hash = $1)`,
      [hash],
    );
    await c.query(`UPDATE ${s}tenants SET updated_at = $2 WHERE id = $1`, [tenantId, at]);
    await this.writeAudit(c, at, tenantId, "delete", version, null, hash, by);
  }

  async versionRecord(db: Db, tenantId: TenantId, version: number): Promise<VersionRecord | undefined> {
    const result = await db.query<VersionRow>(`${this.versionSelect} WHERE v.tenant_id = $1 AND v.version = $2`, [
      tenantId,
      version,
    ]);
    const row = result.rows[0];
    return row && toVersionRecord(row);
  }

  /** Stores the bundle once per hash; a concurrent delete of the same hash is waited out and retried. */
  async #putBundle(c: PoolClient, u: CheckedUpload, at: Date): Promise<boolean> {
    const s = this.#s;
    for (;;) {
      const inserted = await c.query(
        `INSERT INTO ${s}bundles (hash, code, source_map, manifest, bytes, uploaded_by, uploaded_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (hash) DO NOTHING`,
        [u.hash, u.code, u.sourceMap, u.manifestJson, u.bytes, u.by, at],
      );
      if (inserted.rowCount === 1) return true;
      const kept = await c.query(`SELECT 1 FROM ${s}bundles WHERE hash = $1 FOR KEY SHARE`, [u.hash]);
      if (kept.rowCount === 1) return false;
    }
  }

  /** Locks the tenant's row for the rest of the transaction; its active version (null if none), or not_found. */
  async lockTenant(c: PoolClient, tenantId: TenantId): Promise<number | null> {
    const result = await c.query<{ active_version: number | null }>(
      `SELECT active_version FROM ${this.#s}tenants WHERE id = $1 FOR UPDATE`,
      [tenantId],
    );
    const row = result.rows[0];
    if (!row) throw tenantNotFound(tenantId);
    return row.active_version;
  }

  /**
   * Makes a version active in one statement (one round trip while the tenant's row is locked): the
   * activation history change `history` (its own parameters from $10), the tenant's row, the end of any
   * rollout, the store's generation, the audit row, and the notification delivered on commit.
   */
  async #switch(
    c: PoolClient,
    history: string,
    historyParams: unknown[],
    change: {
      tenantId: TenantId;
      version: number;
      from: number | null;
      hash: BundleHash;
      type: "activate" | "rollback";
      by: string;
      at: Date;
      detail?: string | undefined;
    },
  ): Promise<void> {
    const s = this.#s;
    await c.query(
      `WITH history AS (${history}),
            tenant AS (UPDATE ${s}tenants SET active_version = $2, updated_at = $3 WHERE id = $1),
            ended AS (DELETE FROM ${s}rollouts WHERE tenant_id = $1),
            bumped AS (UPDATE ${s}store_state SET generation = generation + 1),
            audited AS (INSERT INTO ${s}audit (at, tenant_id, type, version, from_version, bundle_hash, by, detail)
                          VALUES ($3, $1, $4, $2, $5, $6, $7, $9))
       ${notifyHeadSql(s, "$8", "$2", false)}`,
      [
        change.tenantId,
        change.version,
        change.at,
        change.type,
        change.from,
        change.hash,
        change.by,
        this.channel,
        change.detail ?? null,
        ...historyParams,
      ],
    );
  }

  async hashOf(c: PoolClient, tenantId: TenantId, version: number): Promise<BundleHash> {
    const result = await c.query<{ bundle_hash: BundleHash }>(
      `SELECT bundle_hash FROM ${this.#s}versions WHERE tenant_id = $1 AND version = $2`,
      [tenantId, version],
    );
    const hash = result.rows[0]?.bundle_hash;
    if (hash === undefined) throw versionNotFound(tenantId, version);
    return hash;
  }

  /** Writes one audit row in the caller's transaction. */
  async writeAudit(
    c: PoolClient,
    at: Date,
    tenantId: TenantId,
    type: AuditType,
    version: number,
    fromVersion: number | null,
    hash: BundleHash | null,
    by: string,
    detail?: string,
  ): Promise<void> {
    await c.query(
      `INSERT INTO ${this.#s}audit (at, tenant_id, type, version, from_version, bundle_hash, by, detail)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [at, tenantId, type, version, fromVersion, hash, by, detail ?? null],
    );
  }
}
