import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TenantId } from "../../src/protocol/index.js";
import { APPLICATION_ID, SCHEMA_VERSION, SqliteBundleStore, StoreError } from "../../src/store/index.js";
import { fakeBundle } from "./helpers/bundles.js";
import { fileDigest, makeUnwritable } from "./helpers/files.js";

const acme = "acme" as TenantId;
let dir: string;
let path: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "isohook-open-"));
  path = join(dir, "store.db");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function openError(
  target: string,
  options: Parameters<typeof SqliteBundleStore.open>[1] = {},
): Promise<StoreError> {
  const error = await SqliteBundleStore.open(target, options).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreError);
  return error as StoreError;
}

async function seed(labels: string[]): Promise<void> {
  const store = await SqliteBundleStore.open(path);
  for (const label of labels) await store.upload({ tenantId: acme, ...fakeBundle(label), by: "ops", activate: true });
  await store.close();
}

describe("SqliteBundleStore.open", () => {
  it("creates the file and its folder, marks it as an isohook store and records the schema version", async () => {
    const nested = join(dir, "a", "b", "store.db");
    const store = await SqliteBundleStore.open(nested);
    await store.close();
    const raw = new Database(nested, { readonly: true });
    expect(raw.pragma("application_id", { simple: true })).toBe(APPLICATION_ID);
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(raw.prepare("SELECT max(version) FROM schema_version").pluck().get()).toBe(SCHEMA_VERSION);
    raw.close();
  });

  it("keeps everything across reopening", async () => {
    await seed(["a1", "a2"]);
    const store = await SqliteBundleStore.open(path);
    expect((await store.active(acme))?.version).toBe(2);
    expect((await store.audit()).length).toBe(4);
    await store.close();
  });

  it("refuses a missing file when asked not to create one, and creates nothing", async () => {
    const error = await openError(path, { create: false });
    expect(error.code).toBe("missing");
    expect(error.message).toContain("isohook migrate --store");
    expect(existsSync(path)).toBe(false);
  });

  it("refuses a file that is not SQLite and leaves it untouched", async () => {
    writeFileSync(path, "name,value\nsecret,42\n".repeat(100));
    const before = fileDigest(path);
    const error = await openError(path);
    expect(error.code).toBe("foreign");
    expect(error.message).toContain("Nothing was changed");
    expect(fileDigest(path)).toBe(before);
  });

  it("refuses another application's SQLite file and leaves it untouched", async () => {
    const raw = new Database(path);
    raw.exec("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO customers (name) VALUES ('x')");
    raw.close();
    const before = fileDigest(path);
    expect((await openError(path)).code).toBe("foreign");
    expect(fileDigest(path)).toBe(before);
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it("refuses an SQLite file with another application id", async () => {
    const raw = new Database(path);
    raw.pragma("application_id = 1234");
    raw.close();
    const before = fileDigest(path);
    expect((await openError(path)).code).toBe("foreign");
    expect(fileDigest(path)).toBe(before);
  });

  it("refuses a folder", async () => {
    mkdirSync(path);
    expect((await openError(path)).code).toBe("foreign");
  });

  it("adopts an empty file", async () => {
    writeFileSync(path, "");
    const store = await SqliteBundleStore.open(path);
    expect(await store.tenants()).toEqual([]);
    await store.close();
  });

  it("refuses a store from a newer schema and leaves it untouched", async () => {
    await seed(["a1"]);
    const raw = new Database(path);
    raw.prepare("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)").run(SCHEMA_VERSION + 1, Date.now());
    raw.close();
    const before = fileDigest(path);
    const error = await openError(path);
    expect(error.code).toBe("newer_schema");
    expect(error.message).toContain("Upgrade isohook");
    expect(fileDigest(path)).toBe(before);
  });

  it("refuses a damaged store and leaves it untouched", async () => {
    await seed(["a1", "a2", "a3"]);
    const { size } = statSync(path);
    const fd = openSync(path, "r+");
    writeSync(fd, new Uint8Array(2048).fill(0xa5), 0, 2048, Math.floor(size / 2));
    closeSync(fd);
    const before = fileDigest(path);
    const error = await openError(path);
    expect(error.code).toBe("corrupt");
    expect(error.message).toContain("backup");
    expect(fileDigest(path)).toBe(before);
  });

  it("refuses a truncated store", async () => {
    await seed(["a1", "a2", "a3"]);
    truncateSync(path, Math.floor(statSync(path).size / 2));
    const before = fileDigest(path);
    expect((await openError(path)).code).toBe("corrupt");
    expect(fileDigest(path)).toBe(before);
  });

  it("refuses a store with a table missing and leaves it untouched", async () => {
    await seed(["a1"]);
    const raw = new Database(path);
    raw.exec("DROP TABLE audit");
    raw.close();
    const before = fileDigest(path);
    const error = await openError(path);
    expect(error.code).toBe("corrupt");
    expect(error.message).toContain("missing table audit");
    expect(fileDigest(path)).toBe(before);
  });

  it("refuses a store whose rows do not validate", async () => {
    await seed(["a1"]);
    const raw = new Database(path);
    raw.prepare("UPDATE bundles SET manifest = ?").run('{"hash":"nope"}');
    raw.close();
    const store = await SqliteBundleStore.open(path);
    const error = await store.active(acme).catch((e: unknown) => e);
    expect((error as StoreError).code).toBe("corrupt");
    await store.close();
  });

  it("says so when the folder cannot be written", async (context) => {
    const folder = join(dir, "locked");
    mkdirSync(folder);
    const undo = makeUnwritable(folder, true);
    if (!undo) return context.skip();
    try {
      const error = await openError(join(folder, "store.db"));
      expect(error.code).toBe("read_only");
      expect(error.message).toContain("--store");
      expect((await openError(join(folder, "sub", "store.db"))).code).toBe("read_only");
    } finally {
      undo();
    }
  });

  it("reads a store whose file cannot be written and refuses writes with read_only", async (context) => {
    await seed(["a1"]);
    const undo = makeUnwritable(path, false);
    if (!undo) return context.skip();
    try {
      const store = await SqliteBundleStore.open(path);
      expect((await store.active(acme))?.version).toBe(1);
      const error = await store.upload({ tenantId: acme, ...fakeBundle("a2"), by: "ops" }).catch((e: unknown) => e);
      expect((error as StoreError).code).toBe("read_only");
      await store.close();
    } finally {
      undo();
    }
  });

  it("fails with full when the store cannot grow, keeps the previous state and stays usable", async () => {
    await seed(["a1"]);
    const capped = await SqliteBundleStore.open(path, {
      maxSizeBytes: statSync(path).size + 4096,
      maxBundleBytes: 1 << 20,
    });
    const big = fakeBundle(`big ${"x".repeat(200_000)}`);
    const error = await capped.upload({ tenantId: acme, ...big, by: "ops", activate: true }).catch((e: unknown) => e);
    expect((error as StoreError).code).toBe("full");
    expect((error as StoreError).message).toContain("Free disk space");
    expect((await capped.versions(acme)).map((v) => v.version)).toEqual([1]);
    await capped.close();
    const store = await SqliteBundleStore.open(path, { maxBundleBytes: 1 << 20 });
    expect((await store.upload({ tenantId: acme, ...big, by: "ops" })).version.version).toBe(2);
    await store.close();
  });

  it("fails with busy when another process holds the write lock past the timeout", async () => {
    await seed(["a1"]);
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    const store = await SqliteBundleStore.open(path, { busyTimeoutMs: 50 });
    const error = await store.upload({ tenantId: acme, ...fakeBundle("a2"), by: "ops" }).catch((e: unknown) => e);
    expect((error as StoreError).code).toBe("busy");
    other.exec("ROLLBACK");
    other.close();
    expect((await store.upload({ tenantId: acme, ...fakeBundle("a2"), by: "ops" })).version.version).toBe(2);
    await store.close();
  });

  it("validates its options", async () => {
    for (const options of [
      { busyTimeoutMs: -1 },
      { refreshMs: 1.5 },
      { maxSizeBytes: 0 },
      { maxBundleBytes: Number.NaN },
    ]) {
      const error = await openError(path, options);
      expect(error.code).toBe("invalid_input");
      expect(error.message).toMatch(/^Expected `\w+` to be an integer from/);
    }
  });
});
