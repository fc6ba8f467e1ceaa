import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import { PostgresBundleStore } from "../../src/store/index.js";
import { PG_SCHEMA_VERSION } from "../../src/store/postgres/postgres-schema.js";
import { fakeBundle } from "./helpers/bundles.js";
import { dropSchema, freshSchema, PG_TEST_URL, pgQuery, pgUrl, postgresAvailable } from "./helpers/postgres.js";
import { rejection } from "./helpers/rejection.js";

const acme = "acme" as TenantId;
const available = await postgresAvailable();
let schema: string;

beforeEach(() => {
  schema = freshSchema();
});
afterEach(() => dropSchema(schema));

/** Everything in the schema the store could have touched: objects, the schema's comment, every row. */
async function catalog(name: string) {
  const objects = await pgQuery(
    `SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 ORDER BY c.relname`,
    [name],
  );
  const comment = await pgQuery(
    "SELECT obj_description(oid, 'pg_namespace') AS c FROM pg_namespace WHERE nspname = $1",
    [name],
  );
  const tables = objects.filter((o) => o.relkind === "r").map((o) => String(o.relname));
  const rows: Record<string, unknown[]> = {};
  for (const table of tables) rows[table] = await pgQuery(`SELECT * FROM "${name}"."${table}" ORDER BY 1`);
  return { objects, comment, rows };
}

describe.skipIf(!available)("opening a PostgreSQL store", () => {
  it("creates its schema once when ten hosts start at once", async () => {
    const stores = await Promise.all(Array.from({ length: 10 }, () => PostgresBundleStore.open(pgUrl(schema))));
    expect(stores.filter((s) => s.migration.from === 0)).toHaveLength(1);
    expect(stores.every((s) => s.migration.to === PG_SCHEMA_VERSION)).toBe(true);
    const applied = await pgQuery(`SELECT version FROM "${schema}".schema_version ORDER BY version`);
    expect(applied).toEqual(Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })));
    await stores[0]?.upload({ tenantId: acme, ...fakeBundle("v1"), by: "ops", activate: true });
    expect((await stores[9]?.active(acme))?.version).toBe(1);
    await Promise.all(stores.map((s) => s.close()));
  });

  it("takes the schema from ?schema= or the schema option, and keeps stores in two schemas apart", async () => {
    const other = freshSchema();
    try {
      const a = await PostgresBundleStore.open(pgUrl(schema));
      const b = await PostgresBundleStore.open(PG_TEST_URL, { schema: other });
      await a.upload({ tenantId: acme, ...fakeBundle("a"), by: "ops" });
      expect([a.schema, b.schema]).toEqual([schema, other]);
      expect(await b.tenants()).toEqual([]);
      await Promise.all([a.close(), b.close()]);
    } finally {
      await dropSchema(other);
    }
  });

  it("refuses a schema holding another application's tables and leaves it untouched", async () => {
    await pgQuery(`CREATE SCHEMA "${schema}"`);
    await pgQuery(`CREATE TABLE "${schema}".users (id int PRIMARY KEY, name text)`);
    await pgQuery(`INSERT INTO "${schema}".users VALUES (1, 'ada')`);
    const before = await catalog(schema);
    const error = await rejection(PostgresBundleStore.open(pgUrl(schema)));
    expect(error.code).toBe("foreign");
    expect(error.message).toContain(`Schema "${schema}"`);
    expect(error.message).toContain("Nothing was changed");
    expect(await catalog(schema)).toEqual(before);
  });

  it("refuses a store written by a newer isohook and leaves it untouched", async () => {
    const store = await PostgresBundleStore.open(pgUrl(schema));
    await store.upload({ tenantId: acme, ...fakeBundle("v1"), by: "ops", activate: true });
    await store.close();
    await pgQuery(`INSERT INTO "${schema}".schema_version (version) VALUES (99)`);
    const before = await catalog(schema);
    const error = await rejection(PostgresBundleStore.open(pgUrl(schema)));
    expect(error.code).toBe("newer_schema");
    expect(error.message).toContain("schema version 99");
    expect(await catalog(schema)).toEqual(before);
  });

  it("adopts an empty schema made by a DBA, and reports a missing table as damage", async () => {
    await pgQuery(`CREATE SCHEMA "${schema}"`);
    const store = await PostgresBundleStore.open(pgUrl(schema));
    expect(store.migration).toEqual({ from: 0, to: PG_SCHEMA_VERSION });
    await store.close();
    await pgQuery(`DROP TABLE "${schema}".activations`);
    expect((await rejection(PostgresBundleStore.open(pgUrl(schema)))).code).toBe("corrupt");
  });

  it("refuses to create a store when asked not to, and creates nothing", async () => {
    const error = await rejection(PostgresBundleStore.open(pgUrl(schema), { create: false }));
    expect(error.code).toBe("missing");
    expect(error.message).toContain("isohook migrate");
    expect(await pgQuery("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).toEqual([]);
  });

  it("fails fast with unavailable and no password when the server cannot be reached", async () => {
    const started = performance.now();
    const error = await rejection(PostgresBundleStore.open("postgres://root:s3cret@127.0.0.1:1/test"));
    expect(error.code).toBe("unavailable");
    expect(error.message).toContain("Check that the server is running");
    expect(error.message).not.toContain("s3cret");
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it.each([
    ["an uppercase name", "Hooks"],
    ["a quote", 'x"; DROP SCHEMA public; --'],
    ["an empty name", ""],
    ["a name too long for the notification channel", "s".repeat(49)],
  ])("rejects a schema name with %s before connecting", async (_what, name) => {
    const error = await rejection(PostgresBundleStore.open(`${PG_TEST_URL}?schema=${encodeURIComponent(name)}`));
    expect(error.code).toBe("invalid_input");
  });
});
