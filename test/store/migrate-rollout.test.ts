/**
 * Migrations 2 (the decision log, the audit's detail) and 3 (rollout and shadow state) on stores written at
 * schema version 1:
 * their rows, audit log included, survive, and the new state works at once.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import {
  APPLICATION_ID,
  type BundleStore,
  PostgresBundleStore,
  SCHEMA_VERSION,
  SqliteBundleStore,
} from "../../src/store/index.js";
import { PG_MIGRATIONS } from "../../src/store/postgres/postgres-schema.js";
import { MIGRATIONS } from "../../src/store/schema.js";
import { fakeBundle } from "./helpers/bundles.js";
import { dropSchema, freshSchema, pgQuery, pgUrl, postgresAvailable } from "./helpers/postgres.js";

const acme = "acme" as TenantId;
const withPostgres = await postgresAvailable();
const [a1, a2] = [fakeBundle("a1"), fakeBundle("a2")];
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "isohook-migrate-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Version 1's rows: acme with v1 active and v2 stored, and their audit entries. Placeholders are $n. */
const V1_ROWS: [string, unknown[]][] = [
  ["INSERT INTO tenants (id, created_at, updated_at, next_version) VALUES ($1, $2, $2, 3)", ["acme", 1000]],
  ...[a1, a2].map((b): [string, unknown[]] => [
    "INSERT INTO bundles (hash, code, source_map, manifest, bytes, uploaded_by, uploaded_at) VALUES ($1, $2, NULL, $3, $4, 'ops', $5)",
    [b.manifest.hash, b.code, JSON.stringify(b.manifest), b.manifest.bytes, 1000],
  ]),
  ...[a1, a2].map((b, i): [string, unknown[]] => [
    "INSERT INTO versions (tenant_id, version, bundle_hash, config, gate_report, uploaded_by, uploaded_at) VALUES ('acme', $1, $2, '{}', NULL, 'ops', $3)",
    [i + 1, b.manifest.hash, 1000],
  ]),
  ["INSERT INTO activations (tenant_id, seq, version) VALUES ('acme', 1, 1)", []],
  ["UPDATE tenants SET active_version = 1 WHERE id = 'acme'", []],
  [
    "INSERT INTO audit (at, tenant_id, type, version, from_version, bundle_hash, by) VALUES ($1, 'acme', 'upload', 1, NULL, $2, 'ops')",
    [1000, a1.manifest.hash],
  ],
  [
    "INSERT INTO audit (at, tenant_id, type, version, from_version, bundle_hash, by) VALUES ($1, 'acme', 'activate', 1, NULL, $2, 'ops')",
    [1000, a1.manifest.hash],
  ],
];

async function afterMigration(store: BundleStore) {
  expect((await store.active(acme))?.version).toBe(1);
  expect((await store.audit()).map((e) => [e.type, e.version, e.detail])).toEqual([
    ["upload", 1, null],
    ["activate", 1, null],
  ]);
  await store.rollout({ tenantId: acme, version: 2, percent: 20, by: "alice" });
  await store.shadow({ tenantId: acme, version: 2, by: "alice" });
  const served = await store.active(acme);
  expect([served?.rollout?.bundle.version, served?.rollout?.percent, served?.shadow?.version]).toEqual([2, 20, 2]);
  expect((await store.audit()).map((e) => e.type)).toEqual(["upload", "activate", "rollout", "shadow"]);
}

describe("migrations 2 and 3 on a store at schema version 1", () => {
  it("keeps a SQLite store's rows and audit log", async () => {
    const path = join(dir, "v1.db");
    const db = new Database(path);
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.exec(MIGRATIONS[0]?.sql ?? "");
    db.prepare("INSERT INTO schema_version (version, applied_at) VALUES (1, 1000)").run();
    for (const [sql, params] of V1_ROWS) db.prepare(sql.replace(/\$\d+/g, "?")).run(...sqliteParams(sql, params));
    db.close();
    const store = await SqliteBundleStore.open(path);
    try {
      expect(store.migration).toEqual({ from: 1, to: SCHEMA_VERSION });
      await afterMigration(store);
    } finally {
      await store.close();
    }
  });

  it.runIf(withPostgres)("keeps a PostgreSQL store's rows and audit log", async () => {
    const schema = freshSchema();
    try {
      await pgQuery(`CREATE SCHEMA "${schema}"`);
      await pgQuery(`COMMENT ON SCHEMA "${schema}" IS 'isohook bundle store'`);
      await pgQuery(`SET search_path TO "${schema}"; ${PG_MIGRATIONS[0]?.sql ?? ""}`);
      await pgQuery(`INSERT INTO "${schema}".schema_version (version) VALUES (1)`);
      for (const [sql, params] of V1_ROWS) {
        // Times are 1000 ms since the epoch: timestamptz columns take them as dates.
        const times = params.map((p) => (p === 1000 ? new Date(1000) : p));
        await pgQuery(
          sql.replace(/INTO (\w+)/, `INTO "${schema}".$1`).replace(/UPDATE (\w+)/, `UPDATE "${schema}".$1`),
          times,
        );
      }
      const store = await PostgresBundleStore.open(pgUrl(schema));
      try {
        expect(store.migration).toEqual({ from: 1, to: SCHEMA_VERSION });
        await afterMigration(store);
      } finally {
        await store.close();
      }
    } finally {
      await dropSchema(schema);
    }
  });
});

/** SQLite takes `?` placeholders in order; `$2` used twice is passed twice. */
function sqliteParams(sql: string, params: unknown[]): unknown[] {
  return [...sql.matchAll(/\$(\d+)/g)].map((m) => params[Number(m[1]) - 1]);
}
