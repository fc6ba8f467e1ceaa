import { resolve } from "node:path";
import { integerOption } from "../active-cache.js";
import { CheckedStore, type CheckedStoreOptions } from "../checked-store.js";
import type { UploadStep } from "../store-inputs.js";
import { openDatabase } from "./open-database.js";
import { SqliteCheckpointLedger, type SqliteGuard } from "./sqlite-checkpoints.js";
import { SqliteDriver } from "./sqlite-driver.js";
import { SqliteQuarantine } from "./sqlite-quarantine.js";

export interface SqliteStoreOptions extends CheckedStoreOptions {
  /** Create the file (and its folder) when missing: default true. Read-only commands pass false. */
  readonly create?: boolean;
  /** How long a write waits for another process's write lock: default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /** Run SQLite's quick_check on open (reads every page): default true. */
  readonly integrityCheck?: boolean;
  /** Caps the file's size (SQLite `max_page_count`); a write past it fails with `full`. */
  readonly maxSizeBytes?: number;
  /** Called inside the upload transaction after each write. For crash tests only: they kill the process here. */
  readonly onUploadStep?: (step: UploadStep) => void;
}

/**
 * The SQLite `BundleStore`: the checked front end over `SqliteDriver`, in one file with a versioned schema
 * (see schema.ts). Its methods do their work at once and return settled promises.
 */
export class SqliteBundleStore extends CheckedStore {
  readonly kind = "sqlite";
  readonly checkpoints: SqliteCheckpointLedger;
  readonly quarantine: SqliteQuarantine;
  readonly path: string;
  /** The schema versions found and left by `open`. */
  readonly migration: { readonly from: number; readonly to: number };

  private constructor(
    path: string,
    driver: SqliteDriver,
    migration: { from: number; to: number },
    options: SqliteStoreOptions,
  ) {
    super(driver, options);
    this.path = path;
    this.migration = migration;
    const clock = options.clock ?? Date.now;
    const guard: SqliteGuard = (signal, fn) => {
      this.assertOpen(signal);
      return driver.guard(fn);
    };
    this.checkpoints = new SqliteCheckpointLedger(driver.db, guard, clock);
    this.quarantine = new SqliteQuarantine(driver.db, driver.queries, guard, clock, this.refreshMs);
  }

  override async close(): Promise<void> {
    this.quarantine.stop();
    await super.close();
  }

  /** Opens or creates the store at `path`. Rejects with a StoreError (foreign, corrupt, newer_schema, read_only, …). */
  static async open(path: string, options: SqliteStoreOptions = {}): Promise<SqliteBundleStore> {
    const absolute = resolve(path);
    const busyTimeoutMs = integerOption("busyTimeoutMs", options.busyTimeoutMs ?? 5_000, 0, 600_000);
    if (options.maxSizeBytes !== undefined) integerOption("maxSizeBytes", options.maxSizeBytes, 1, 2 ** 52);
    const { db, migration } = openDatabase(absolute, {
      create: options.create ?? true,
      busyTimeoutMs,
      integrityCheck: options.integrityCheck ?? true,
      maxSizeBytes: options.maxSizeBytes,
    });
    try {
      const maxPageCount =
        options.maxSizeBytes === undefined ? null : Number(db.pragma("max_page_count", { simple: true }));
      const driver = new SqliteDriver(absolute, db, {
        busyTimeoutMs,
        maxPageCount,
        onUploadStep: options.onUploadStep,
      });
      return new SqliteBundleStore(absolute, driver, migration, options);
    } catch (error) {
      db.close();
      throw error;
    }
  }
}
