/**
 * The store's SQLite schema and its migrations. `schema_version` holds one row per applied migration;
 * a store whose highest version is above `SCHEMA_VERSION` was written by a newer isohook and is refused
 * untouched. `application_id` marks the file as an isohook store so a foreign SQLite file is never
 * adopted. Migrations only ever append: never edit one that has shipped.
 */

/** "ISOH" as a big-endian 32-bit integer, stored in the SQLite header (offset 68). */
export const APPLICATION_ID = 0x49534f48;

export interface Migration {
  readonly version: number;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE schema_version (
        version INTEGER PRIMARY KEY,
        applied_at INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE tenants (
        id TEXT PRIMARY KEY,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        next_version INTEGER NOT NULL DEFAULT 1 CHECK (next_version >= 1),
        active_version INTEGER,
        FOREIGN KEY (id, active_version) REFERENCES versions (tenant_id, version)
      ) STRICT;

      CREATE TABLE bundles (
        hash TEXT PRIMARY KEY,
        code TEXT NOT NULL,
        source_map TEXT,
        manifest TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        uploaded_by TEXT NOT NULL,
        uploaded_at INTEGER NOT NULL
      ) STRICT;

      CREATE TABLE versions (
        tenant_id TEXT NOT NULL REFERENCES tenants (id),
        version INTEGER NOT NULL CHECK (version >= 1),
        bundle_hash TEXT NOT NULL REFERENCES bundles (hash),
        config TEXT NOT NULL,
        gate_report TEXT,
        uploaded_by TEXT NOT NULL,
        uploaded_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, version)
      ) STRICT;
      CREATE INDEX versions_by_bundle ON versions (bundle_hash);

      -- The activation history rollback walks back: the highest seq is the active version.
      CREATE TABLE activations (
        tenant_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        version INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, seq),
        FOREIGN KEY (tenant_id, version) REFERENCES versions (tenant_id, version) ON DELETE CASCADE
      ) STRICT;

      -- Kept when versions are deleted: no foreign keys.
      CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        tenant_id TEXT NOT NULL,
        type TEXT NOT NULL CHECK (type IN ('upload', 'activate', 'rollback', 'delete')),
        version INTEGER NOT NULL,
        from_version INTEGER,
        bundle_hash TEXT,
        by TEXT NOT NULL
      ) STRICT;
      CREATE INDEX audit_by_tenant ON audit (tenant_id, id);
    `,
  },
  {
    // The decision log. The audit's type check goes (types are checked by the store's code, so later admin
    // actions need no table rebuild), its version may be null and it gains a detail: a `log` change is
    // about settings, not a version.
    version: 2,
    sql: `
      CREATE TABLE audit_v2 (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        tenant_id TEXT NOT NULL,
        type TEXT NOT NULL,
        version INTEGER,
        from_version INTEGER,
        bundle_hash TEXT,
        by TEXT NOT NULL,
        detail TEXT
      ) STRICT;
      INSERT INTO audit_v2 (id, at, tenant_id, type, version, from_version, bundle_hash, by)
        SELECT id, at, tenant_id, type, version, from_version, bundle_hash, by FROM audit;
      DROP TABLE audit;
      ALTER TABLE audit_v2 RENAME TO audit;
      CREATE INDEX audit_by_tenant ON audit (tenant_id, id);

      -- A tenant's row exists while its log is on.
      CREATE TABLE decision_log_settings (
        tenant_id TEXT PRIMARY KEY,
        settings TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        updated_by TEXT NOT NULL
      ) STRICT;

      CREATE TABLE decisions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tenant_id TEXT NOT NULL,
        at INTEGER NOT NULL,
        run_id TEXT NOT NULL,
        turn INTEGER NOT NULL,
        point TEXT NOT NULL,
        version INTEGER NOT NULL,
        bundle_hash TEXT NOT NULL,
        event TEXT NOT NULL,
        event_chars INTEGER NOT NULL,
        truncated INTEGER NOT NULL,
        ctx TEXT NOT NULL,
        record TEXT NOT NULL,
        shadow TEXT
      ) STRICT;
      -- One index: a record costs one index entry. Times rise with ids, so \`since\` scans back from the newest.
      CREATE INDEX decisions_by_tenant ON decisions (tenant_id, id);
    `,
  },
  {
    // Rollout and shadow state: at most one candidate of each kind per tenant. Their audit entries (types
    // rollout, shadow, shadow_off) carry the rollout's share in the audit's detail.
    version: 3,
    sql: `
      CREATE TABLE rollouts (
        tenant_id TEXT PRIMARY KEY REFERENCES tenants (id),
        version INTEGER NOT NULL,
        basis_points INTEGER NOT NULL CHECK (basis_points BETWEEN 1 AND 9999),
        started_at INTEGER NOT NULL,
        by TEXT NOT NULL,
        FOREIGN KEY (tenant_id, version) REFERENCES versions (tenant_id, version)
      ) STRICT;

      CREATE TABLE shadows (
        tenant_id TEXT PRIMARY KEY REFERENCES tenants (id),
        version INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        by TEXT NOT NULL,
        FOREIGN KEY (tenant_id, version) REFERENCES versions (tenant_id, version)
      ) STRICT;
    `,
  },
  {
    // What the hosts of a fleet learn at run time and share: checkpoints resumed (kept until the
    // checkpoint expires), and quarantine (each host's failures of a bundle, and the entry they led to).
    version: 4,
    sql: `
      CREATE TABLE resumed_checkpoints (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        run_id TEXT NOT NULL,
        resumed_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX resumed_checkpoints_by_expiry ON resumed_checkpoints (expires_at);

      CREATE TABLE quarantine_failures (
        tenant_id TEXT NOT NULL,
        bundle_hash TEXT NOT NULL,
        at INTEGER NOT NULL,
        host TEXT NOT NULL,
        code TEXT NOT NULL,
        weight INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX quarantine_failures_by_bundle ON quarantine_failures (tenant_id, bundle_hash, at);

      CREATE TABLE quarantines (
        tenant_id TEXT NOT NULL,
        bundle_hash TEXT NOT NULL,
        strike INTEGER NOT NULL,
        since INTEGER NOT NULL,
        until INTEGER NOT NULL,
        failures INTEGER NOT NULL,
        codes TEXT NOT NULL,
        hosts TEXT NOT NULL,
        released_at INTEGER,
        released_by TEXT,
        changed_at INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, bundle_hash)
      ) STRICT;
      CREATE INDEX quarantines_by_change ON quarantines (changed_at);
    `,
  },
];

export const SCHEMA_VERSION = MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);
