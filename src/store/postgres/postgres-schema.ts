/**
 * The PostgreSQL store's schema and its migrations. Everything lives in one schema of its own (default
 * `isohook`) marked by `SCHEMA_MARK` as its comment; `schema_version` holds one row per applied migration.
 * A schema that holds other objects and lacks the mark is foreign, one whose version is above
 * `PG_SCHEMA_VERSION` was written by a newer isohook: both are refused before anything is written.
 * Migrations run in one transaction under an advisory lock, so hosts starting at once migrate once.
 * Migrations only ever append: never edit one that has shipped.
 */
import type { PoolClient } from "pg";
import { StoreError } from "../errors.js";
import type { Migration } from "../schema.js";

export const SCHEMA_MARK = "isohook bundle store";

export const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE schema_version (
        version integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      );

      -- Bumped by every change of an active version: what hosts poll while their LISTEN connection is down.
      CREATE TABLE store_state (
        one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
        generation bigint NOT NULL DEFAULT 0
      );
      INSERT INTO store_state DEFAULT VALUES;

      CREATE TABLE tenants (
        id text PRIMARY KEY,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        next_version bigint NOT NULL DEFAULT 1 CHECK (next_version >= 1),
        active_version bigint
      );

      CREATE TABLE bundles (
        hash text PRIMARY KEY,
        code text NOT NULL,
        source_map text,
        manifest text NOT NULL,
        bytes integer NOT NULL,
        uploaded_by text NOT NULL,
        uploaded_at timestamptz NOT NULL
      );

      CREATE TABLE versions (
        tenant_id text NOT NULL REFERENCES tenants (id),
        version bigint NOT NULL CHECK (version >= 1),
        bundle_hash text NOT NULL REFERENCES bundles (hash),
        config text NOT NULL,
        gate_report text,
        uploaded_by text NOT NULL,
        uploaded_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, version)
      );
      CREATE INDEX versions_by_bundle ON versions (bundle_hash);
      ALTER TABLE tenants ADD FOREIGN KEY (id, active_version) REFERENCES versions (tenant_id, version);

      -- The activation history rollback walks back: the highest seq is the active version.
      CREATE TABLE activations (
        tenant_id text NOT NULL,
        seq bigint NOT NULL,
        version bigint NOT NULL,
        PRIMARY KEY (tenant_id, seq),
        FOREIGN KEY (tenant_id, version) REFERENCES versions (tenant_id, version) ON DELETE CASCADE
      );

      -- Kept when versions are deleted: no foreign keys.
      CREATE TABLE audit (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at timestamptz NOT NULL,
        tenant_id text NOT NULL,
        type text NOT NULL CHECK (type IN ('upload', 'activate', 'rollback', 'delete')),
        version bigint NOT NULL,
        from_version bigint,
        bundle_hash text,
        by text NOT NULL
      );
      CREATE INDEX audit_by_tenant ON audit (tenant_id, id);
    `,
  },
  {
    // The decision log (see schema.ts, migration 2, for the audit's changes).
    version: 2,
    sql: `
      ALTER TABLE audit DROP CONSTRAINT IF EXISTS audit_type_check;
      ALTER TABLE audit ALTER COLUMN version DROP NOT NULL;
      ALTER TABLE audit ADD COLUMN detail text;

      CREATE TABLE decision_log_settings (
        tenant_id text PRIMARY KEY,
        settings text NOT NULL,
        updated_at timestamptz NOT NULL,
        updated_by text NOT NULL
      );

      CREATE TABLE decisions (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tenant_id text NOT NULL,
        at timestamptz NOT NULL,
        run_id text NOT NULL,
        turn integer NOT NULL,
        point text NOT NULL,
        version bigint NOT NULL,
        bundle_hash text NOT NULL,
        event text NOT NULL,
        event_chars integer NOT NULL,
        truncated boolean NOT NULL,
        ctx text NOT NULL,
        record text NOT NULL,
        shadow text
      );
      -- One index: a record costs one index entry. Times rise with ids, so \`since\` scans back from the newest.
      CREATE INDEX decisions_by_tenant ON decisions (tenant_id, id);
    `,
  },
  {
    // Rollout and shadow state (see schema.ts, migration 3).
    version: 3,
    sql: `
      CREATE TABLE rollouts (
        tenant_id text PRIMARY KEY REFERENCES tenants (id),
        version bigint NOT NULL,
        basis_points integer NOT NULL CHECK (basis_points BETWEEN 1 AND 9999),
        started_at timestamptz NOT NULL,
        by text NOT NULL,
        FOREIGN KEY (tenant_id, version) REFERENCES versions (tenant_id, version)
      );

      CREATE TABLE shadows (
        tenant_id text PRIMARY KEY REFERENCES tenants (id),
        version bigint NOT NULL,
        started_at timestamptz NOT NULL,
        by text NOT NULL,
        FOREIGN KEY (tenant_id, version) REFERENCES versions (tenant_id, version)
      );
    `,
  },
  {
    // Fleet-wide run-time state (see schema.ts, migration 4). Times are milliseconds since the epoch, as
    // the book keeps them; a change of a quarantine NOTIFYs the store's quarantine channel.
    version: 4,
    sql: `
      CREATE TABLE resumed_checkpoints (
        id text PRIMARY KEY,
        tenant_id text NOT NULL,
        run_id text NOT NULL,
        resumed_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
      );
      CREATE INDEX resumed_checkpoints_by_expiry ON resumed_checkpoints (expires_at);

      CREATE TABLE quarantine_failures (
        tenant_id text NOT NULL,
        bundle_hash text NOT NULL,
        at bigint NOT NULL,
        host text NOT NULL,
        code text NOT NULL,
        weight integer NOT NULL
      );
      CREATE INDEX quarantine_failures_by_bundle ON quarantine_failures (tenant_id, bundle_hash, at);

      CREATE TABLE quarantines (
        tenant_id text NOT NULL,
        bundle_hash text NOT NULL,
        strike integer NOT NULL,
        since bigint NOT NULL,
        until bigint NOT NULL,
        failures integer NOT NULL,
        codes text NOT NULL,
        hosts text NOT NULL,
        released_at bigint,
        released_by text,
        changed_at bigint NOT NULL,
        PRIMARY KEY (tenant_id, bundle_hash)
      );
      CREATE INDEX quarantines_by_change ON quarantines (changed_at);
    `,
  },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS.reduce((max, m) => Math.max(max, m.version), 0);

const TABLES = [
  "schema_version",
  "store_state",
  "tenants",
  "bundles",
  "versions",
  "activations",
  "audit",
  "decision_log_settings",
  "decisions",
  "rollouts",
  "shadows",
  "resumed_checkpoints",
  "quarantine_failures",
  "quarantines",
];

/** "ISOH": the first key of the store's advisory lock; the second is the schema name's hash. */
const LOCK_CLASS = 0x49534f48;

/** What a schema holds before the store touches it. */
export type SchemaState =
  | { readonly kind: "absent" }
  | { readonly kind: "empty" }
  | { readonly kind: "foreign"; readonly objects: number }
  | { readonly kind: "isohook"; readonly version: number; readonly missingTables: readonly string[] };

/** Reads a schema's state with catalog queries only: nothing is written, nothing is locked. */
export async function inspectSchema(client: PoolClient, schema: string): Promise<SchemaState> {
  const found = await client.query<{ comment: string | null; objects: number }>(
    `SELECT obj_description(n.oid, 'pg_namespace') AS comment,
            (SELECT count(*) FROM pg_class c WHERE c.relnamespace = n.oid)
              + (SELECT count(*) FROM pg_proc p WHERE p.pronamespace = n.oid) AS objects
       FROM pg_namespace n WHERE n.nspname = $1`,
    [schema],
  );
  const row = found.rows[0];
  if (!row) return { kind: "absent" };
  if (row.comment !== SCHEMA_MARK)
    return row.objects === 0 ? { kind: "empty" } : { kind: "foreign", objects: row.objects };
  const tables = await client.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1",
    [schema],
  );
  const present = new Set(tables.rows.map((r) => r.name));
  const missingTables = TABLES.filter((t) => !present.has(t));
  if (!present.has("schema_version")) return { kind: "isohook", version: 0, missingTables };
  const version = await client.query<{ version: number }>(
    `SELECT coalesce(max(version), 0)::bigint AS version FROM "${schema}".schema_version`,
  );
  return { kind: "isohook", version: version.rows[0]?.version ?? 0, missingTables };
}

/** The schema versions before and after opening: equal when nothing was migrated. */
export interface MigrationResult {
  readonly from: number;
  readonly to: number;
}

/**
 * Checks the store's schema and brings it to PG_SCHEMA_VERSION. The first look takes no lock, so hosts
 * opening an up-to-date store never wait on each other; a migration is done in one transaction under the
 * schema's advisory lock, re-reading the state under the lock (another host may have just done it).
 */
export async function prepareSchema(
  client: PoolClient,
  schema: string,
  where: string,
  create: boolean,
): Promise<MigrationResult> {
  const refuse = (state: SchemaState) => refuseState(state, schema, where, create);
  const state = await inspectSchema(client, schema);
  refuse(state);
  if (state.kind === "isohook" && state.version === PG_SCHEMA_VERSION)
    return { from: state.version, to: state.version };
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [LOCK_CLASS, schema]);
    const locked = await inspectSchema(client, schema);
    refuse(locked);
    const from = locked.kind === "isohook" ? locked.version : 0;
    if (from < PG_SCHEMA_VERSION) {
      if (locked.kind === "absent") await client.query(`CREATE SCHEMA "${schema}"`);
      await client.query(`COMMENT ON SCHEMA "${schema}" IS '${SCHEMA_MARK}'`);
      await client.query(`SET LOCAL search_path TO "${schema}"`);
      for (const migration of PG_MIGRATIONS) {
        if (migration.version <= from) continue;
        await client.query(migration.sql);
        await client.query("INSERT INTO schema_version (version) VALUES ($1)", [migration.version]);
      }
    }
    await client.query("COMMIT");
    return { from, to: PG_SCHEMA_VERSION };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}

function refuseState(state: SchemaState, schema: string, where: string, create: boolean): void {
  switch (state.kind) {
    case "absent":
    case "empty":
      if (create) return;
      throw new StoreError(
        "missing",
        `No isohook store in schema "${schema}" of ${where}. Create it with \`isohook migrate --store <url>\` (then upload bundles to it), or pass the right ?schema=.`,
      );
    case "foreign":
      throw new StoreError(
        "foreign",
        `Schema "${schema}" of ${where} is not an isohook store (it holds ${state.objects} other objects). Nothing was changed. Pass ?schema=<name> to use a schema of its own.`,
      );
    case "isohook":
      if (state.version > PG_SCHEMA_VERSION) {
        throw new StoreError(
          "newer_schema",
          `The store in schema "${schema}" of ${where} has schema version ${state.version}, newer than this isohook understands (${PG_SCHEMA_VERSION}). Nothing was changed. Upgrade isohook to use it.`,
        );
      }
      if (state.version === PG_SCHEMA_VERSION && state.missingTables.length > 0) {
        throw new StoreError(
          "corrupt",
          `The store in schema "${schema}" of ${where} is damaged (missing ${state.missingTables.join(", ")}). Nothing was changed. Restore the schema from a backup.`,
        );
      }
      return;
    default: {
      const never: never = state;
      throw new Error(`unknown schema state ${JSON.stringify(never)}`);
    }
  }
}
