import { resolve } from "node:path";
import {
  type ActiveBundle,
  type BundleHash as BundleHashType,
  DEFAULT_LIMITS,
  type TenantId,
} from "../../protocol/index.js";
import {
  ActiveBundleCache,
  type ActiveCacheOptions,
  type ActiveHead,
  type CachedCode,
  integerOption,
} from "../active-cache.js";
import type {
  ActivationResult,
  AuditEntry,
  AuditQuery,
  BundleStore,
  RolloutInput,
  RolloutResult,
  ShadowInput,
  ShadowResult,
  StoredBundle,
  TenantAction,
  TenantSummary,
  UploadInput,
  UploadResult,
  VersionAction,
  VersionDetail,
  VersionRecord,
} from "../bundle-store.js";
import {
  checkDecisionQuery,
  checkLogSettingsInput,
  checkPrune,
  type DecisionQuery,
  type DecisionRow,
  type LogSettingsChange,
  type LogSettingsInput,
  type PruneInput,
  type StoredDecision,
  type TenantLogSettings,
} from "../decision-log-store.js";
import { StoreError } from "../errors.js";
import { openDatabase, type SqliteDatabase } from "./open-database.js";
import { SqliteAppendThread } from "./sqlite-append-thread.js";
import { SqliteCandidateQueries } from "./sqlite-candidates.js";
import { SqliteDecisionLog } from "./sqlite-decision-log.js";
import { toStoreError } from "./sqlite-errors.js";
import { SqliteHeadQueries } from "./sqlite-head.js";
import { SqliteQueries } from "./sqlite-queries.js";
import {
  checkAuditLimit,
  checkHash,
  checkRollout,
  checkShadow,
  checkTenantAction,
  checkTenantId,
  checkUpload,
  checkVersion,
  checkVersionAction,
  type UploadStep,
} from "../store-inputs.js";
import { toActiveHead, toCachedCode } from "../store-rows.js";

export interface SqliteStoreOptions extends ActiveCacheOptions {
  /** Create the file (and its folder) when missing: default true. Read-only commands pass false. */
  readonly create?: boolean;
  /** How long a write waits for another process's write lock: default 5000 ms. */
  readonly busyTimeoutMs?: number;
  /** Run SQLite's quick_check on open (reads every page): default true. */
  readonly integrityCheck?: boolean;
  /** Caps the file's size (SQLite `max_page_count`); a write past it fails with `full`. */
  readonly maxSizeBytes?: number;
  /** Default `DEFAULT_LIMITS.maxBundleBytes` (1 MiB). */
  readonly maxBundleBytes?: number;
  /** Milliseconds since the epoch for timestamps: default Date.now. */
  readonly clock?: () => number;
  /** Called inside the upload transaction after each write. For crash tests only: they kill the process here. */
  readonly onUploadStep?: (step: UploadStep) => void;
}

/**
 * The SQLite `BundleStore`: one file in WAL mode, writes in `BEGIN IMMEDIATE` transactions (so versions
 * allocated by concurrent processes are distinct), `busy_timeout`, foreign keys on, and a versioned schema
 * (see schema.ts). better-sqlite3 is synchronous: each method does its work at once and returns a settled
 * promise; a lock held by another process blocks for at most `busyTimeoutMs`.
 */
export class SqliteBundleStore implements BundleStore {
  readonly kind = "sqlite";
  readonly path: string;
  /** The schema versions found and left by `open`. */
  readonly migration: { readonly from: number; readonly to: number };
  readonly #db: SqliteDatabase;
  readonly #q: SqliteQueries;
  readonly #candidates: SqliteCandidateQueries;
  readonly #heads: SqliteHeadQueries;
  readonly #log: SqliteDecisionLog;
  readonly #appender: SqliteAppendThread;
  readonly #cache: ActiveBundleCache;
  readonly #busyTimeoutMs: number;
  readonly #maxBundleBytes: number;
  readonly #clock: () => number;
  readonly #onUploadStep: ((step: UploadStep) => void) | undefined;
  #closed = false;

  private constructor(
    path: string,
    db: SqliteDatabase,
    migration: { from: number; to: number },
    options: SqliteStoreOptions,
    busyTimeoutMs: number,
  ) {
    this.path = path;
    this.migration = migration;
    this.#db = db;
    this.#busyTimeoutMs = busyTimeoutMs;
    this.#maxBundleBytes = integerOption(
      "maxBundleBytes",
      options.maxBundleBytes ?? DEFAULT_LIMITS.maxBundleBytes,
      1,
      2 ** 31,
    );
    this.#clock = options.clock ?? Date.now;
    this.#onUploadStep = options.onUploadStep;
    this.#q = new SqliteQueries(db);
    this.#candidates = new SqliteCandidateQueries(db, this.#q);
    this.#heads = new SqliteHeadQueries(this.#q);
    this.#log = new SqliteDecisionLog(db);
    const maxPageCount =
      options.maxSizeBytes === undefined ? null : Number(db.pragma("max_page_count", { simple: true }));
    this.#appender = new SqliteAppendThread(path, busyTimeoutMs, maxPageCount);
    const heads = this.#heads;
    this.#cache = new ActiveBundleCache(
      {
        changeToken: () => heads.dataVersion(),
        head: (tenantId) => this.#head(tenantId),
        code: (hash) => this.#code(hash),
      },
      options,
    );
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
      return new SqliteBundleStore(absolute, db, migration, options, busyTimeoutMs);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  async upload(input: UploadInput, signal?: AbortSignal): Promise<UploadResult> {
    const upload = checkUpload(input, this.#maxBundleBytes);
    return this.#write(signal, () => {
      const at = this.#clock();
      const result = this.#q.upload(upload, at, this.#onUploadStep);
      const version = this.#q.versionRecord(upload.tenantId, result.version);
      if (!version) throw new StoreError("io", "The uploaded version vanished inside its own transaction.");
      return { version, bundleCreated: result.bundleCreated, activated: result.activated };
    });
  }

  async activate(input: VersionAction, signal?: AbortSignal): Promise<ActivationResult> {
    const { tenantId, version, by } = checkVersionAction(input);
    return this.#write(signal, () => this.#q.activate(tenantId, version, by, this.#clock()));
  }

  async rollback(input: TenantAction, signal?: AbortSignal): Promise<ActivationResult> {
    const { tenantId, by } = checkTenantAction(input);
    return this.#write(signal, () => this.#q.rollback(tenantId, by, this.#clock()));
  }

  async rollout(input: RolloutInput, signal?: AbortSignal): Promise<RolloutResult> {
    const rollout = checkRollout(input);
    return this.#write(signal, () => this.#candidates.rollout(rollout, this.#clock()));
  }

  async shadow(input: ShadowInput, signal?: AbortSignal): Promise<ShadowResult> {
    const { tenantId, version, by } = checkShadow(input);
    return this.#write(signal, () => this.#candidates.shadow(tenantId, version, by, this.#clock()));
  }

  async deleteVersion(input: VersionAction, signal?: AbortSignal): Promise<void> {
    const { tenantId, version, by } = checkVersionAction(input);
    this.#write(signal, () => this.#q.deleteVersion(tenantId, version, by, this.#clock()));
  }

  async tenants(signal?: AbortSignal): Promise<TenantSummary[]> {
    return this.#read(signal, () => this.#q.tenants(undefined));
  }

  async tenant(tenantId: TenantId, signal?: AbortSignal): Promise<TenantSummary | undefined> {
    const id = checkTenantId(tenantId);
    return this.#read(signal, () => this.#q.tenants(id)[0]);
  }

  async versions(tenantId: TenantId, signal?: AbortSignal): Promise<VersionRecord[]> {
    const id = checkTenantId(tenantId);
    return this.#read(signal, () => this.#q.versions(id));
  }

  async version(tenantId: TenantId, version?: number, signal?: AbortSignal): Promise<VersionDetail | undefined> {
    const id = checkTenantId(tenantId);
    const n = version === undefined ? undefined : checkVersion(version);
    return this.#read(signal, () => this.#q.versionDetail(id, n));
  }

  async bundle(hash: BundleHashType, signal?: AbortSignal): Promise<StoredBundle | undefined> {
    const checked = checkHash(hash);
    return this.#read(signal, () => this.#q.bundle(checked));
  }

  async audit(query?: AuditQuery, signal?: AbortSignal): Promise<AuditEntry[]> {
    const tenantId = query?.tenantId === undefined ? undefined : checkTenantId(query.tenantId);
    const limit = checkAuditLimit(query);
    return this.#read(signal, () => this.#q.audit(tenantId, limit));
  }

  async active(tenantId: TenantId, signal?: AbortSignal): Promise<ActiveBundle | undefined> {
    const id = checkTenantId(tenantId);
    const served = this.#read(signal, () => this.#cache.get(id));
    if (!(served instanceof Promise)) return served;
    try {
      return await served;
    } catch (error) {
      throw toStoreError(error, this.path, this.#busyTimeoutMs);
    }
  }

  async logSettings(tenantId?: TenantId, signal?: AbortSignal): Promise<TenantLogSettings[]> {
    const id = tenantId === undefined ? undefined : checkTenantId(tenantId);
    return this.#read(signal, () => this.#log.logSettings(id));
  }

  async setLogSettings(input: LogSettingsInput, signal?: AbortSignal): Promise<LogSettingsChange> {
    const checked = checkLogSettingsInput(input);
    return this.#read(signal, () => this.#log.setLogSettings(checked, this.#clock()));
  }

  /**
   * On a thread of its own (SqliteAppendThread), so the inserts leave the event loop that runs hook calls;
   * not through `#write`: records change no active version.
   */
  async appendDecisions(rows: readonly DecisionRow[], signal?: AbortSignal): Promise<number> {
    this.#read(signal, () => undefined);
    if (rows.length === 0) return 0;
    try {
      return await this.#appender.append(rows);
    } catch (error) {
      throw toStoreError(error, this.path, this.#busyTimeoutMs);
    }
  }

  async decisions(query: DecisionQuery, signal?: AbortSignal): Promise<StoredDecision[]> {
    const checked = checkDecisionQuery(query);
    return this.#read(signal, () => this.#log.decisions(checked));
  }

  async pruneDecisions(input: PruneInput, signal?: AbortSignal): Promise<number> {
    const checked = checkPrune(input);
    return this.#read(signal, () => this.#log.prune(checked));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#appender.close();
    this.#db.close();
  }

  #head(tenantId: TenantId): ActiveHead | undefined {
    const row = this.#heads.head(tenantId);
    return row && toActiveHead(row, tenantId);
  }

  #code(hash: BundleHashType): CachedCode | undefined {
    const row = this.#heads.code(hash);
    return row && toCachedCode(row, hash);
  }

  #read<T>(signal: AbortSignal | undefined, fn: () => T): T {
    signal?.throwIfAborted();
    if (this.#closed) throw new StoreError("closed", "The store is closed: open it again.");
    try {
      return fn();
    } catch (error) {
      throw toStoreError(error, this.path, this.#busyTimeoutMs);
    }
  }

  #write<T>(signal: AbortSignal | undefined, fn: () => T): T {
    try {
      return this.#read(signal, fn);
    } finally {
      this.#cache.invalidate();
    }
  }
}
