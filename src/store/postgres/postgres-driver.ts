import type { PoolClient } from "pg";
import type { BundleHash, TenantId } from "../../protocol/index.js";
import type { ActiveBundleCache, ActiveHead, CachedCode, HeadAndCode } from "../active-cache.js";
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
import type { StoreDriver } from "../store-driver.js";
import type { CheckedRollout, CheckedUpload, UploadStep } from "../store-inputs.js";
import {
  toActiveHead,
  toAuditEntry,
  toCachedCode,
  toStoredBundle,
  toTenantSummary,
  toVersionDetail,
  toVersionRecord,
} from "../store-rows.js";
import type { PgCalls } from "./postgres-calls.js";
import { PostgresCandidateQueries } from "./postgres-candidates.js";
import { PgChangeFeed, type SideChannel } from "./postgres-changes.js";
import type { PgConnections } from "./postgres-connections.js";
import { PostgresDecisionLog } from "./postgres-decision-log.js";
import { PostgresHeadQueries } from "./postgres-head.js";
import type { PostgresQueries } from "./postgres-queries.js";
import { PostgresReads } from "./postgres-reads.js";

export interface PostgresDriverOptions {
  readonly queries: PostgresQueries;
  /** Open, closed, retry and error mapping: shared with the store's quarantine book and checkpoint ledger. */
  readonly calls: PgCalls;
  readonly schema: string;
  readonly heartbeatMs: number;
  readonly onUploadStep: ((step: UploadStep) => void | Promise<void>) | undefined;
  /** Another channel the LISTEN connection serves (the quarantine book's). */
  readonly side?: SideChannel | undefined;
}

/**
 * The PostgreSQL backend under the checked front end: a pool of connections (node-postgres), every write one
 * transaction that locks the tenant's row (versions are distinct and gap-free across processes) with its
 * audit row, reads retried once on a dropped connection, and live pick-up through LISTEN/NOTIFY (see
 * postgres-changes.ts), started by `watch`.
 */
export class PostgresDriver implements StoreDriver {
  readonly #db: PgConnections;
  readonly #options: PostgresDriverOptions;
  readonly #q: PostgresQueries;
  readonly #candidates: PostgresCandidateQueries;
  readonly #heads: PostgresHeadQueries;
  readonly #reads: PostgresReads;
  readonly #log: PostgresDecisionLog;
  readonly #calls: PgCalls;
  #feed: PgChangeFeed | undefined;

  constructor(db: PgConnections, options: PostgresDriverOptions) {
    this.#db = db;
    this.#options = options;
    this.#q = options.queries;
    this.#calls = options.calls;
    this.#candidates = new PostgresCandidateQueries(this.#q);
    this.#heads = new PostgresHeadQueries(this.#q);
    this.#reads = new PostgresReads(this.#q);
    this.#log = new PostgresDecisionLog(options.schema);
  }

  upload(upload: CheckedUpload, at: number): Promise<UploadResult> {
    return this.#write((c) => this.#q.upload(c, upload, new Date(at), this.#options.onUploadStep));
  }

  activate({ tenantId, version, by }: VersionAction, at: number): Promise<ActivationResult> {
    return this.#write((c) => this.#q.activate(c, tenantId, version, by, new Date(at)));
  }

  rollback({ tenantId, by }: TenantAction, at: number): Promise<ActivationResult> {
    return this.#write((c) => this.#q.rollback(c, tenantId, by, new Date(at)));
  }

  rollout(rollout: CheckedRollout, at: number): Promise<RolloutResult> {
    return this.#write((c) => this.#candidates.rollout(c, rollout, new Date(at)));
  }

  shadow({ tenantId, version, by }: ShadowInput, at: number): Promise<ShadowResult> {
    return this.#write((c) => this.#candidates.shadow(c, tenantId, version, by, new Date(at)));
  }

  async deleteVersion({ tenantId, version, by }: VersionAction, at: number): Promise<void> {
    await this.#write((c) => this.#q.deleteVersion(c, tenantId, version, by, new Date(at)));
  }

  async tenants(tenantId: TenantId | undefined): Promise<TenantSummary[]> {
    return (await this.#read(() => this.#reads.tenants(this.#db.pool, tenantId))).map(toTenantSummary);
  }

  async versions(tenantId: TenantId): Promise<VersionRecord[]> {
    return (await this.#read(() => this.#reads.versions(this.#db.pool, tenantId))).map(toVersionRecord);
  }

  async version(tenantId: TenantId, version: number | undefined): Promise<VersionDetail | undefined> {
    const row = await this.#read(() => this.#reads.versionDetail(this.#db.pool, tenantId, version));
    return row && toVersionDetail(row);
  }

  async bundle(hash: BundleHash): Promise<StoredBundle | undefined> {
    const row = await this.#read(() => this.#reads.bundle(this.#db.pool, hash));
    return row && toStoredBundle(row);
  }

  async audit(tenantId: TenantId | undefined, limit: number): Promise<AuditEntry[]> {
    return (await this.#read(() => this.#reads.audit(this.#db.pool, tenantId, limit))).map(toAuditEntry);
  }

  async head(tenantId: TenantId): Promise<ActiveHead | undefined> {
    const row = await this.#read(() => this.#heads.head(this.#db.pool, tenantId));
    return row && toActiveHead(row, tenantId);
  }

  async headAndCode(tenantId: TenantId, known: readonly BundleHash[]): Promise<HeadAndCode | undefined> {
    const row = await this.#read(() => this.#heads.headAndCode(this.#db.pool, tenantId, known));
    if (row === undefined) return undefined;
    const code = new Map((row.codes ?? []).map((c) => [c.hash, toCachedCode(c, c.hash)] as const));
    return { head: toActiveHead(row, tenantId), code };
  }

  async code(hash: BundleHash): Promise<CachedCode | undefined> {
    const row = await this.#read(() => this.#heads.code(this.#db.pool, hash));
    return row && toCachedCode(row, hash);
  }

  /** Live pick-up: the LISTEN connection invalidates the front end's cache on every notified change. */
  attach(cache: ActiveBundleCache): void {
    this.#feed = new PgChangeFeed({
      ...(this.#options.side === undefined ? {} : { also: this.#options.side }),
      connect: () => this.#db.dedicated(),
      channel: this.#q.channel,
      generation: () => this.#heads.generation(this.#db.pool),
      cache,
      heartbeatMs: this.#options.heartbeatMs,
    });
  }

  /** Starts (or restarts) the LISTEN connection. */
  async watch(): Promise<void> {
    if (this.#feed !== undefined && !this.#feed.listening) await this.#feed.start();
  }

  logSettings(tenantId: TenantId | undefined): Promise<TenantLogSettings[]> {
    return this.#read(() => this.#log.logSettings(this.#db.pool, tenantId));
  }

  setLogSettings(input: LogSettingsInput, at: number): Promise<LogSettingsChange> {
    return this.#write((c) => this.#log.setLogSettings(c, input, new Date(at)));
  }

  /** One INSERT, atomic on its own: no BEGIN and COMMIT round trips around it. */
  appendDecisions(rows: readonly DecisionRow[]): Promise<number> {
    return this.#calls.statement(undefined, (c) => this.#log.append(c, rows));
  }

  decisions(query: CheckedDecisionQuery): Promise<StoredDecision[]> {
    return this.#read(() => this.#log.decisions(this.#db.pool, query));
  }

  pruneDecisions(input: PruneInput): Promise<number> {
    return this.#write((c) => this.#log.prune(c, input));
  }

  async close(): Promise<void> {
    this.#calls.close();
    await this.#feed?.close();
    await this.#db.end();
  }

  #read<T>(fn: () => Promise<T>): Promise<T> {
    return this.#calls.read(undefined, fn);
  }

  #write<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return this.#calls.write(undefined, fn);
  }
}
