import type { BundleHash, TenantId } from "../../protocol/index.js";
import type { ActiveHead, CachedCode } from "../active-cache.js";
import type {
  ActivationResult,
  AuditEntry,
  RolloutResult,
  ShadowInput,
  ShadowResult,
  StoredBundle,
  TenantAction,
  TenantSummary,
  UploadResult,
  VersionAction,
  VersionDetail,
  VersionRecord,
} from "../bundle-store.js";
import type {
  CheckedDecisionQuery,
  DecisionRow,
  LogSettingsChange,
  LogSettingsInput,
  PruneInput,
  StoredDecision,
  TenantLogSettings,
} from "../decision-log-store.js";
import { StoreError } from "../errors.js";
import type { StoreDriver } from "../store-driver.js";
import type { CheckedRollout, CheckedUpload, UploadStep } from "../store-inputs.js";
import { toActiveHead, toCachedCode } from "../store-rows.js";
import type { SqliteDatabase } from "./open-database.js";
import { SqliteAppendThread } from "./sqlite-append-thread.js";
import { SqliteCandidateQueries } from "./sqlite-candidates.js";
import { SqliteDecisionLog } from "./sqlite-decision-log.js";
import { toStoreError } from "./sqlite-errors.js";
import { SqliteHeadQueries } from "./sqlite-head.js";
import { SqliteQueries } from "./sqlite-queries.js";

/**
 * The SQLite backend under the checked front end: one file in WAL mode, writes in `BEGIN IMMEDIATE`
 * transactions (so versions allocated by concurrent processes are distinct), `busy_timeout`, foreign keys
 * on. better-sqlite3 is synchronous: each method does its work at once; a lock held by another process
 * blocks for at most `busyTimeoutMs`. Decision-log appends run on a thread of their own.
 */
export class SqliteDriver implements StoreDriver {
  /** The open database and its queries, for the store's parts outside the driver (quarantine, checkpoints). */
  readonly db: SqliteDatabase;
  readonly queries: SqliteQueries;
  readonly #path: string;
  readonly #q: SqliteQueries;
  readonly #candidates: SqliteCandidateQueries;
  readonly #heads: SqliteHeadQueries;
  readonly #log: SqliteDecisionLog;
  readonly #appender: SqliteAppendThread;
  readonly #busyTimeoutMs: number;
  readonly #onUploadStep: ((step: UploadStep) => void) | undefined;

  constructor(
    path: string,
    db: SqliteDatabase,
    options: {
      readonly busyTimeoutMs: number;
      readonly maxPageCount: number | null;
      readonly onUploadStep: ((step: UploadStep) => void) | undefined;
    },
  ) {
    this.#path = path;
    this.db = db;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#onUploadStep = options.onUploadStep;
    this.#q = new SqliteQueries(db);
    this.queries = this.#q;
    this.#candidates = new SqliteCandidateQueries(db, this.#q);
    this.#heads = new SqliteHeadQueries(this.#q);
    this.#log = new SqliteDecisionLog(db);
    this.#appender = new SqliteAppendThread(path, options.busyTimeoutMs, options.maxPageCount);
  }

  upload(upload: CheckedUpload, at: number): UploadResult {
    return this.#run(() => {
      const result = this.#q.upload(upload, at, this.#onUploadStep);
      const version = this.#q.versionRecord(upload.tenantId, result.version);
      if (!version) throw new StoreError("io", "The uploaded version vanished inside its own transaction.");
      return { version, bundleCreated: result.bundleCreated, activated: result.activated };
    });
  }

  activate({ tenantId, version, by }: VersionAction, at: number): ActivationResult {
    return this.#run(() => this.#q.activate(tenantId, version, by, at));
  }

  rollback({ tenantId, by }: TenantAction, at: number): ActivationResult {
    return this.#run(() => this.#q.rollback(tenantId, by, at));
  }

  rollout(rollout: CheckedRollout, at: number): RolloutResult {
    return this.#run(() => this.#candidates.rollout(rollout, at));
  }

  shadow({ tenantId, version, by }: ShadowInput, at: number): ShadowResult {
    return this.#run(() => this.#candidates.shadow(tenantId, version, by, at));
  }

  deleteVersion({ tenantId, version, by }: VersionAction, at: number): void {
    this.#run(() => this.#q.deleteVersion(tenantId, version, by, at));
  }

  tenants(tenantId: TenantId | undefined): TenantSummary[] {
    return this.#run(() => this.#q.tenants(tenantId));
  }

  versions(tenantId: TenantId): VersionRecord[] {
    return this.#run(() => this.#q.versions(tenantId));
  }

  version(tenantId: TenantId, version: number | undefined): VersionDetail | undefined {
    return this.#run(() => this.#q.versionDetail(tenantId, version));
  }

  bundle(hash: BundleHash): StoredBundle | undefined {
    return this.#run(() => this.#q.bundle(hash));
  }

  audit(tenantId: TenantId | undefined, limit: number): AuditEntry[] {
    return this.#run(() => this.#q.audit(tenantId, limit));
  }

  changeToken(): number {
    return this.#run(() => this.#heads.dataVersion());
  }

  head(tenantId: TenantId): ActiveHead | undefined {
    const row = this.#run(() => this.#heads.head(tenantId));
    return row && toActiveHead(row, tenantId);
  }

  code(hash: BundleHash): CachedCode | undefined {
    const row = this.#run(() => this.#heads.code(hash));
    return row && toCachedCode(row, hash);
  }

  logSettings(tenantId: TenantId | undefined): TenantLogSettings[] {
    return this.#run(() => this.#log.logSettings(tenantId));
  }

  setLogSettings(input: LogSettingsInput, at: number): LogSettingsChange {
    return this.#run(() => this.#log.setLogSettings(input, at));
  }

  /** On a thread of its own (SqliteAppendThread), so the inserts leave the event loop that runs hook calls. */
  async appendDecisions(rows: readonly DecisionRow[]): Promise<number> {
    try {
      return await this.#appender.append(rows);
    } catch (error) {
      throw toStoreError(error, this.#path, this.#busyTimeoutMs);
    }
  }

  decisions(query: CheckedDecisionQuery): StoredDecision[] {
    return this.#run(() => this.#log.decisions(query));
  }

  pruneDecisions(input: PruneInput): number {
    return this.#run(() => this.#log.prune(input));
  }

  async close(): Promise<void> {
    await this.#appender.close();
    this.db.close();
  }

  /** Runs `fn` on the database with its failures as `StoreError`s. */
  guard<T>(fn: () => T): T {
    return this.#run(fn);
  }

  #run<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw toStoreError(error, this.#path, this.#busyTimeoutMs);
    }
  }
}
