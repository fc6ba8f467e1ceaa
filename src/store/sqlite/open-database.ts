import { closeSync, lstatSync, mkdirSync, openSync, readSync, realpathSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { StoreError } from "../errors.js";
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from "../schema.js";
import { corrupt, foreign, toStoreError } from "./sqlite-errors.js";

export type SqliteDatabase = Database.Database;
export type Statement = Database.Statement;

export interface OpenDatabaseOptions {
  readonly create: boolean;
  readonly busyTimeoutMs: number;
  readonly integrityCheck: boolean;
  readonly maxSizeBytes: number | undefined;
}

const SQLITE_MAGIC = "SQLite format 3\0";

/**
 * Opens (or, with `create`, creates) an isohook store file. Every check that can refuse the file runs
 * before anything is written to it: the SQLite header and `application_id` (foreign files), the integrity
 * check (damage) and the schema version (newer stores). Only then is WAL turned on and a migration run.
 */
export function openDatabase(
  path: string,
  options: OpenDatabaseOptions,
): { db: SqliteDatabase; migration: { from: number; to: number } } {
  const existing = inspectFile(path);
  if (existing === "missing") {
    if (!options.create) {
      throw new StoreError(
        "missing",
        `No store at ${path}. Create it with \`isohook migrate --store ${path}\` (then upload bundles to it), or pass --store / set ISOHOOK_STORE to the right file.`,
      );
    }
    try {
      mkdirSync(dirname(path), { recursive: true });
    } catch (error) {
      throw toStoreError(error, path, options.busyTimeoutMs);
    }
  }
  if (existing !== "missing") checkCompanions(path);
  let db: SqliteDatabase;
  try {
    db = new Database(path, { fileMustExist: !options.create, timeout: options.busyTimeoutMs });
  } catch (error) {
    throw toStoreError(error, path, options.busyTimeoutMs);
  }
  try {
    const applicationId = Number(db.pragma("application_id", { simple: true }));
    if (applicationId === APPLICATION_ID) {
      if (options.integrityCheck) checkIntegrity(db, path);
      const current = schemaVersion(db, path);
      if (current > SCHEMA_VERSION) throw newerSchema(path, current);
      if (current === SCHEMA_VERSION) checkTables(db, path);
    } else if (applicationId !== 0 || tableCount(db) > 0) {
      throw foreign(
        path,
        applicationId === 0 ? "an SQLite database of another application" : `application id ${applicationId}`,
      );
    }
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = FULL");
    db.pragma("foreign_keys = ON");
    if (options.maxSizeBytes !== undefined) {
      const pageSize = Number(db.pragma("page_size", { simple: true }));
      db.pragma(`max_page_count = ${Math.max(1, Math.floor(options.maxSizeBytes / pageSize))}`);
    }
    const from = migrate(db, path);
    return { db, migration: { from, to: SCHEMA_VERSION } };
  } catch (error) {
    db.close();
    throw toStoreError(error, path, options.busyTimeoutMs);
  }
}

/** Refuses anything that is not a regular file starting with the SQLite header; "missing" if absent. */
function inspectFile(path: string): "missing" | "empty" | "sqlite" {
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw foreign(path, "not a regular file");
    size = stat.size;
  } catch (error) {
    if (error instanceof StoreError) throw error;
    if (typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT") return "missing";
    throw toStoreError(error, path, 0);
  }
  if (size === 0) return "empty";
  const header = new Uint8Array(SQLITE_MAGIC.length);
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    readSync(fd, header, 0, header.length, 0);
  } catch (error) {
    throw toStoreError(error, path, 0);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (String.fromCharCode(...header) !== SQLITE_MAGIC) throw foreign(path, "not an SQLite database");
  return "sqlite";
}

/**
 * SQLite opens `<file>-wal`, `-shm` and `-journal` beside the store's real path following symlinks, and
 * writes to them: a symlink there (or a FIFO, a device) would make it write a file elsewhere or hang. They
 * are checked when the store is opened; one created later needs write access to the store's folder, which
 * must be the operator's alone.
 */
function checkCompanions(path: string): void {
  const real = realpathSync(path);
  for (const suffix of ["-wal", "-shm", "-journal"]) {
    const companion = `${real}${suffix}`;
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(companion);
    } catch {
      continue;
    }
    if (stat.isFile()) continue;
    const what = stat.isSymbolicLink() ? "a symbolic link" : "not a regular file";
    throw new StoreError(
      "unsafe_companion",
      `The store's ${suffix} file ${companion} is ${what}: SQLite would write through it. Nothing was opened. Remove it (no isohook process may be using the store), and keep the store's folder writable by the operator only.`,
    );
  }
}

function checkIntegrity(db: SqliteDatabase, path: string): void {
  const rows = db.pragma("quick_check") as { quick_check: string }[];
  if (rows.length !== 1 || rows[0]?.quick_check !== "ok") {
    const problems = rows.map((r) => r.quick_check).filter((line) => !line.startsWith("***"));
    throw corrupt(path, `integrity check: ${problems.slice(0, 2).join("; ")}`);
  }
}

const TABLES = [
  "schema_version",
  "tenants",
  "bundles",
  "versions",
  "activations",
  "audit",
  "decision_log_settings",
  "decisions",
];

function checkTables(db: SqliteDatabase, path: string): void {
  const present = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[]);
  const missing = TABLES.filter((t) => !present.has(t));
  if (missing.length > 0) throw corrupt(path, `missing table${missing.length === 1 ? "" : "s"} ${missing.join(", ")}`);
}

function tableCount(db: SqliteDatabase): number {
  return Number(db.prepare("SELECT count(*) FROM sqlite_schema").pluck().get());
}

function schemaVersion(db: SqliteDatabase, path: string): number {
  try {
    return Number(db.prepare("SELECT coalesce(max(version), 0) FROM schema_version").pluck().get());
  } catch (error) {
    if (error instanceof Error && /no such table/.test(error.message)) throw corrupt(path, "no schema_version table");
    throw error;
  }
}

function newerSchema(path: string, version: number): StoreError {
  return new StoreError(
    "newer_schema",
    `The store at ${path} has schema version ${version}, newer than this isohook understands (${SCHEMA_VERSION}). Nothing was changed. Upgrade isohook to use it.`,
  );
}

/**
 * Brings a new or older store to SCHEMA_VERSION in one immediate transaction (safe against a concurrent
 * opener); returns the version it found.
 */
function migrate(db: SqliteDatabase, path: string): number {
  const apply = db.transaction((): number => {
    const applicationId = Number(db.pragma("application_id", { simple: true }));
    let current = 0;
    if (applicationId === APPLICATION_ID) {
      current = schemaVersion(db, path);
    } else if (applicationId === 0 && tableCount(db) === 0) {
      db.pragma(`application_id = ${APPLICATION_ID}`);
    } else {
      throw foreign(path, `application id ${applicationId}`);
    }
    if (current > SCHEMA_VERSION) throw newerSchema(path, current);
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      db.prepare("INSERT INTO schema_version (version, applied_at) VALUES (?, ?)").run(migration.version, Date.now());
    }
    return current;
  });
  const found = schemaVersionOrZero(db);
  return found < SCHEMA_VERSION ? apply.immediate() : found;
}

function schemaVersionOrZero(db: SqliteDatabase): number {
  if (Number(db.pragma("application_id", { simple: true })) !== APPLICATION_ID) return 0;
  return Number(db.prepare("SELECT coalesce(max(version), 0) FROM schema_version").pluck().get());
}
