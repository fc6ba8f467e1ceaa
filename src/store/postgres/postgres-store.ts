import type { PoolClient } from "pg";
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
import { PostgresCandidateQueries } from "./postgres-candidates.js";
import { PgChangeFeed } from "./postgres-changes.js";
import { PgConnections } from "./postgres-connections.js";
import { PostgresDecisionLog } from "./postgres-decision-log.js";
import { pgStoreError } from "./postgres-errors.js";
import { PostgresHeadQueries } from "./postgres-head.js";
import { PostgresQueries } from "./postgres-queries.js";
import { PostgresReads } from "./postgres-reads.js";
import { type MigrationResult, prepareSchema } from "./postgres-schema.js";
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
import { type StoreLocation, storeLocation } from "../store-location.js";
import {
  toActiveHead,
  toAuditEntry,
  toCachedCode,
  toStoredBundle,
  toTenantSummary,
  toVersionDetail,
  toVersionRecord,
} from "../store-rows.js";

export interface PostgresStoreOptions extends ActiveCacheOptions {
  /** Create the schema when it does not exist: default true. Read-only commands pass false. */
  readonly create?: boolean;
  /** The schema the store lives in; overrides the URL's `?schema=`. Default `isohook`. */
  readonly schema?: string;
  /** Connections in the pool (the LISTEN connection is one more): default 10. */
  readonly poolSize?: number;
  /** How long to wait for a connection before failing with `unavailable`: default 5000 ms. */
  readonly connectTimeoutMs?: number;
  /** How often the LISTEN connection is checked with a query: default 5000 ms. */
  readonly heartbeatMs?: number;
  /** Default `DEFAULT_LIMITS.maxBundleBytes` (1 MiB). */
  readonly maxBundleBytes?: number;
  /** Milliseconds since the epoch for timestamps: default Date.now. */
  readonly clock?: () => number;
  /** Awaited inside the upload transaction after each write. For crash tests only. */
  readonly onUploadStep?: (step: UploadStep) => void | Promise<void>;
}

type PgLocation = Extract<StoreLocation, { kind: "postgres" }>;

/**
 * The PostgreSQL `BundleStore`, for many hosts sharing one store: a pool of connections (node-postgres),
 * tables in a schema of their own, created and migrated under an advisory lock (see postgres-schema.ts),
 * every write one transaction that locks the tenant's row (versions are distinct and gap-free across
 * processes) with its audit row, and live pick-up through LISTEN/NOTIFY (see postgres-changes.ts).
 * While the database is unreachable, `active()` serves the last known active versions and the store
 * reports `store.unreachable`; every other method rejects with `unavailable`.
 *
 * ```ts
 * const store = await PostgresBundleStore.open("postgres://isohook@db.internal/platform?schema=hooks");
 * ```
 */
export class PostgresBundleStore implements BundleStore {
  readonly kind = "postgres";
  /** The schema the tables live in. */
  readonly schema: string;
  /** The connection string with any password replaced by `***`. */
  readonly location: string;
  /** The schema versions found and left by `open`. */
  readonly migration: MigrationResult;
  readonly #db: PgConnections;
  readonly #q: PostgresQueries;
  readonly #candidates: PostgresCandidateQueries;
  readonly #heads: PostgresHeadQueries;
  readonly #reads: PostgresReads;
  readonly #log: PostgresDecisionLog;
  readonly #cache: ActiveBundleCache;
  readonly #feed: PgChangeFeed;
  readonly #maxBundleBytes: number;
  readonly #clock: () => number;
  readonly #onUploadStep: PostgresStoreOptions["onUploadStep"];
  #closed = false;

  private constructor(
    db: PgConnections,
    location: PgLocation,
    migration: MigrationResult,
    options: PostgresStoreOptions,
  ) {
    this.#db = db;
    this.schema = location.schema;
    this.location = location.display;
    this.migration = migration;
    this.#maxBundleBytes = integerOption(
      "maxBundleBytes",
      options.maxBundleBytes ?? DEFAULT_LIMITS.maxBundleBytes,
      1,
      2 ** 31,
    );
    this.#clock = options.clock ?? Date.now;
    this.#onUploadStep = options.onUploadStep;
    this.#q = new PostgresQueries(location.schema);
    this.#candidates = new PostgresCandidateQueries(this.#q);
    this.#heads = new PostgresHeadQueries(this.#q);
    this.#reads = new PostgresReads(this.#q);
    this.#log = new PostgresDecisionLog(location.schema);
    this.#cache = new ActiveBundleCache(
      { head: (tenantId) => this.#head(tenantId), code: (hash) => this.#code(hash) },
      options,
    );
    this.#feed = new PgChangeFeed({
      connect: () => db.dedicated(),
      channel: this.#q.channel,
      generation: () => this.#heads.generation(db.pool),
      cache: this.#cache,
      heartbeatMs: integerOption("heartbeatMs", options.heartbeatMs ?? 5_000, 10, 3_600_000),
    });
  }

  /**
   * Connects to `url` (`postgres://…`; `?schema=` picks the schema) and creates or migrates the store's
   * schema. Rejects with a StoreError: unavailable, foreign, newer_schema, missing, read_only, …
   */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresBundleStore> {
    const location = storeLocation(url, options.schema);
    if (location.kind !== "postgres")
      throw new StoreError("invalid_input", `Expected a postgres:// URL, got ${JSON.stringify(url)}.`);
    const db = await PgConnections.open({
      url: location.url,
      poolSize: integerOption("poolSize", options.poolSize ?? 10, 1, 1000),
      connectTimeoutMs: integerOption("connectTimeoutMs", options.connectTimeoutMs ?? 5_000, 1, 600_000),
    });
    try {
      const migration = await db.withClient((client) =>
        prepareSchema(client, location.schema, location.display, options.create ?? true),
      );
      return new PostgresBundleStore(db, location, migration, options);
    } catch (error) {
      await db.end();
      throw pgStoreError(error, location.display);
    }
  }

  async upload(input: UploadInput, signal?: AbortSignal): Promise<UploadResult> {
    const upload = checkUpload(input, this.#maxBundleBytes);
    const result = await this.#write(signal, (c) =>
      this.#q.upload(c, upload, new Date(this.#clock()), this.#onUploadStep),
    );
    if (result.activated) this.#cache.invalidate(upload.tenantId);
    return result;
  }

  async activate(input: VersionAction, signal?: AbortSignal): Promise<ActivationResult> {
    const { tenantId, version, by } = checkVersionAction(input);
    const result = await this.#write(signal, (c) =>
      this.#q.activate(c, tenantId, version, by, new Date(this.#clock())),
    );
    this.#cache.invalidate(tenantId);
    return result;
  }

  async rollback(input: TenantAction, signal?: AbortSignal): Promise<ActivationResult> {
    const { tenantId, by } = checkTenantAction(input);
    const result = await this.#write(signal, (c) => this.#q.rollback(c, tenantId, by, new Date(this.#clock())));
    this.#cache.invalidate(tenantId);
    return result;
  }

  async rollout(input: RolloutInput, signal?: AbortSignal): Promise<RolloutResult> {
    const rollout = checkRollout(input);
    const result = await this.#write(signal, (c) => this.#candidates.rollout(c, rollout, new Date(this.#clock())));
    this.#cache.invalidate(rollout.tenantId);
    return result;
  }

  async shadow(input: ShadowInput, signal?: AbortSignal): Promise<ShadowResult> {
    const { tenantId, version, by } = checkShadow(input);
    const result = await this.#write(signal, (c) =>
      this.#candidates.shadow(c, tenantId, version, by, new Date(this.#clock())),
    );
    this.#cache.invalidate(tenantId);
    return result;
  }

  async deleteVersion(input: VersionAction, signal?: AbortSignal): Promise<void> {
    const { tenantId, version, by } = checkVersionAction(input);
    await this.#write(signal, (c) => this.#q.deleteVersion(c, tenantId, version, by, new Date(this.#clock())));
  }

  async tenants(signal?: AbortSignal): Promise<TenantSummary[]> {
    return (await this.#read(signal, () => this.#reads.tenants(this.#db.pool, undefined))).map(toTenantSummary);
  }

  async tenant(tenantId: TenantId, signal?: AbortSignal): Promise<TenantSummary | undefined> {
    const id = checkTenantId(tenantId);
    const row = (await this.#read(signal, () => this.#reads.tenants(this.#db.pool, id)))[0];
    return row && toTenantSummary(row);
  }

  async versions(tenantId: TenantId, signal?: AbortSignal): Promise<VersionRecord[]> {
    const id = checkTenantId(tenantId);
    return (await this.#read(signal, () => this.#reads.versions(this.#db.pool, id))).map(toVersionRecord);
  }

  async version(tenantId: TenantId, version?: number, signal?: AbortSignal): Promise<VersionDetail | undefined> {
    const id = checkTenantId(tenantId);
    const n = version === undefined ? undefined : checkVersion(version);
    const row = await this.#read(signal, () => this.#reads.versionDetail(this.#db.pool, id, n));
    return row && toVersionDetail(row);
  }

  async bundle(hash: BundleHashType, signal?: AbortSignal): Promise<StoredBundle | undefined> {
    const checked = checkHash(hash);
    const row = await this.#read(signal, () => this.#reads.bundle(this.#db.pool, checked));
    return row && toStoredBundle(row);
  }

  async audit(query?: AuditQuery, signal?: AbortSignal): Promise<AuditEntry[]> {
    const tenantId = query?.tenantId === undefined ? undefined : checkTenantId(query.tenantId);
    const limit = checkAuditLimit(query);
    return (await this.#read(signal, () => this.#reads.audit(this.#db.pool, tenantId, limit))).map(toAuditEntry);
  }

  /** Served from the cache; the first call starts live pick-up (LISTEN) before anything is read. */
  async active(tenantId: TenantId, signal?: AbortSignal): Promise<ActiveBundle | undefined> {
    const id = checkTenantId(tenantId);
    this.#open(signal);
    if (!this.#feed.listening) await this.#feed.start();
    return this.#cache.get(id);
  }

  async logSettings(tenantId?: TenantId, signal?: AbortSignal): Promise<TenantLogSettings[]> {
    const id = tenantId === undefined ? undefined : checkTenantId(tenantId);
    return this.#read(signal, () => this.#log.logSettings(this.#db.pool, id));
  }

  async setLogSettings(input: LogSettingsInput, signal?: AbortSignal): Promise<LogSettingsChange> {
    const checked = checkLogSettingsInput(input);
    return this.#write(signal, (c) => this.#log.setLogSettings(c, checked, new Date(this.#clock())));
  }

  async appendDecisions(rows: readonly DecisionRow[], signal?: AbortSignal): Promise<number> {
    if (rows.length === 0) return 0;
    return this.#write(signal, (c) => this.#log.append(c, rows));
  }

  async decisions(query: DecisionQuery, signal?: AbortSignal): Promise<StoredDecision[]> {
    const checked = checkDecisionQuery(query);
    return this.#read(signal, () => this.#log.decisions(this.#db.pool, checked));
  }

  async pruneDecisions(input: PruneInput, signal?: AbortSignal): Promise<number> {
    const checked = checkPrune(input);
    return this.#write(signal, (c) => this.#log.prune(c, checked));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#feed.close();
    await this.#db.end();
  }

  async #head(tenantId: TenantId): Promise<ActiveHead | undefined> {
    const row = await this.#read(undefined, () => this.#heads.head(this.#db.pool, tenantId));
    return row && toActiveHead(row, tenantId);
  }

  async #code(hash: BundleHashType): Promise<CachedCode | undefined> {
    const row = await this.#read(undefined, () => this.#heads.code(this.#db.pool, hash));
    return row && toCachedCode(row, hash);
  }

  #open(signal: AbortSignal | undefined): void {
    signal?.throwIfAborted();
    if (this.#closed) throw new StoreError("closed", "The store is closed: open it again.");
  }

  /** One read through the pool, retried once on a dropped connection (a pooled connection may have died idle). */
  async #read<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    this.#open(signal);
    try {
      return await fn();
    } catch (first) {
      const error = pgStoreError(first, this.location);
      if (error.code !== "unavailable" || this.#closed) throw error;
      try {
        return await fn();
      } catch (second) {
        throw pgStoreError(second, this.location);
      }
    }
  }

  /** One transaction on one pooled connection. */
  async #write<T>(signal: AbortSignal | undefined, fn: (client: PoolClient) => Promise<T>): Promise<T> {
    this.#open(signal);
    try {
      return await this.#db.transaction(fn);
    } catch (error) {
      throw pgStoreError(error, this.location);
    }
  }
}
