import { type ActiveBundle, type BundleHash, DEFAULT_LIMITS, type TenantId } from "../protocol/index.js";
import { ActiveBundleCache, type ActiveCacheOptions, type ActiveReader, integerOption } from "./active-cache.js";
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
} from "./bundle-store.js";
import type { CheckpointLedger } from "./checkpoint-ledger.js";
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
} from "./decision-log-store.js";
import { StoreError } from "./errors.js";
import type { StoreQuarantine } from "./quarantine-rules.js";
import type { StoreDriver } from "./store-driver.js";
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
} from "./store-inputs.js";

export interface CheckedStoreOptions extends ActiveCacheOptions {
  /** Default `DEFAULT_LIMITS.maxBundleBytes` (1 MiB). */
  readonly maxBundleBytes?: number;
  /** Milliseconds since the epoch for timestamps: default Date.now. */
  readonly clock?: () => number;
}

/**
 * The one front end of every `BundleStore`: checks each input once (store-inputs.ts, decision-log-store.ts),
 * refuses calls once closed or aborted, stamps writes with its clock, and serves `active()` from the
 * `ActiveBundleCache`, invalidated by its own writes; the backend's `StoreDriver` does the rest. The
 * backends' classes (`SqliteBundleStore`, `PostgresBundleStore`, `MemoryBundleStore`) are this front end
 * over their driver, plus what only they know (a file path, a schema, a migration).
 */
export abstract class CheckedStore implements BundleStore {
  abstract readonly kind: BundleStore["kind"];
  abstract readonly checkpoints: CheckpointLedger;
  abstract readonly quarantine: StoreQuarantine;
  readonly #driver: StoreDriver;
  readonly #cache: ActiveBundleCache;
  readonly #maxBundleBytes: number;
  readonly #clock: () => number;
  #closed = false;

  protected constructor(driver: StoreDriver, options: CheckedStoreOptions) {
    this.#driver = driver;
    this.#maxBundleBytes = integerOption(
      "maxBundleBytes",
      options.maxBundleBytes ?? DEFAULT_LIMITS.maxBundleBytes,
      1,
      2 ** 31,
    );
    this.#clock = options.clock ?? Date.now;
    const reader: ActiveReader = {
      head: (id: TenantId) => driver.head(id),
      code: (hash: BundleHash) => driver.code(hash),
      ...(driver.changeToken === undefined ? {} : { changeToken: driver.changeToken.bind(driver) }),
      ...(driver.headAndCode === undefined ? {} : { headAndCode: driver.headAndCode.bind(driver) }),
    };
    this.#cache = new ActiveBundleCache(reader, options);
    driver.attach?.(this.#cache);
  }

  async upload(input: UploadInput, signal?: AbortSignal): Promise<UploadResult> {
    const upload = checkUpload(input, this.#maxBundleBytes);
    return this.#write(signal, upload.tenantId, () => this.#driver.upload(upload, this.#clock()));
  }

  async activate(input: VersionAction, signal?: AbortSignal): Promise<ActivationResult> {
    const action = checkVersionAction(input);
    return this.#write(signal, action.tenantId, () => this.#driver.activate(action, this.#clock()));
  }

  async rollback(input: TenantAction, signal?: AbortSignal): Promise<ActivationResult> {
    const action = checkTenantAction(input);
    return this.#write(signal, action.tenantId, () => this.#driver.rollback(action, this.#clock()));
  }

  async rollout(input: RolloutInput, signal?: AbortSignal): Promise<RolloutResult> {
    const rollout = checkRollout(input);
    return this.#write(signal, rollout.tenantId, () => this.#driver.rollout(rollout, this.#clock()));
  }

  async shadow(input: ShadowInput, signal?: AbortSignal): Promise<ShadowResult> {
    const shadow = checkShadow(input);
    return this.#write(signal, shadow.tenantId, () => this.#driver.shadow(shadow, this.#clock()));
  }

  async deleteVersion(input: VersionAction, signal?: AbortSignal): Promise<void> {
    const action = checkVersionAction(input);
    return this.#write(signal, action.tenantId, () => this.#driver.deleteVersion(action, this.#clock()));
  }

  async tenants(signal?: AbortSignal): Promise<TenantSummary[]> {
    this.#open(signal);
    return this.#driver.tenants(undefined);
  }

  async tenant(tenantId: TenantId, signal?: AbortSignal): Promise<TenantSummary | undefined> {
    const id = checkTenantId(tenantId);
    this.#open(signal);
    return (await this.#driver.tenants(id))[0];
  }

  async versions(tenantId: TenantId, signal?: AbortSignal): Promise<VersionRecord[]> {
    const id = checkTenantId(tenantId);
    this.#open(signal);
    return this.#driver.versions(id);
  }

  async version(tenantId: TenantId, version?: number, signal?: AbortSignal): Promise<VersionDetail | undefined> {
    const id = checkTenantId(tenantId);
    const n = version === undefined ? undefined : checkVersion(version);
    this.#open(signal);
    return this.#driver.version(id, n);
  }

  async bundle(hash: BundleHash, signal?: AbortSignal): Promise<StoredBundle | undefined> {
    const checked = checkHash(hash);
    this.#open(signal);
    return this.#driver.bundle(checked);
  }

  async audit(query?: AuditQuery, signal?: AbortSignal): Promise<AuditEntry[]> {
    const tenantId = query?.tenantId === undefined ? undefined : checkTenantId(query.tenantId);
    const limit = checkAuditLimit(query);
    this.#open(signal);
    return this.#driver.audit(tenantId, limit);
  }

  /** Served from the cache, once the backend watches for changes where it can. */
  async active(tenantId: TenantId, signal?: AbortSignal): Promise<ActiveBundle | undefined> {
    const id = checkTenantId(tenantId);
    this.#open(signal);
    if (this.#driver.watch !== undefined) await this.#driver.watch();
    return this.#cache.get(id);
  }

  async logSettings(tenantId?: TenantId, signal?: AbortSignal): Promise<TenantLogSettings[]> {
    const id = tenantId === undefined ? undefined : checkTenantId(tenantId);
    this.#open(signal);
    return this.#driver.logSettings(id);
  }

  async setLogSettings(input: LogSettingsInput, signal?: AbortSignal): Promise<LogSettingsChange> {
    const checked = checkLogSettingsInput(input);
    this.#open(signal);
    return this.#driver.setLogSettings(checked, this.#clock());
  }

  async appendDecisions(rows: readonly DecisionRow[], signal?: AbortSignal): Promise<number> {
    this.#open(signal);
    if (rows.length === 0) return 0;
    return this.#driver.appendDecisions(rows);
  }

  async decisions(query: DecisionQuery, signal?: AbortSignal): Promise<StoredDecision[]> {
    const checked = checkDecisionQuery(query);
    this.#open(signal);
    return this.#driver.decisions(checked);
  }

  async pruneDecisions(input: PruneInput, signal?: AbortSignal): Promise<number> {
    const checked = checkPrune(input);
    this.#open(signal);
    return this.#driver.pruneDecisions(checked);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#driver.close();
  }

  /** How often the active-bundle cache looks for changes another process made (`refreshMs`). */
  protected get refreshMs(): number {
    return this.#cache.refreshMs;
  }

  /** Refuses a call once the store is closed or `signal` aborted: for a backend's parts outside the driver. */
  protected assertOpen(signal: AbortSignal | undefined): void {
    this.#open(signal);
  }

  #open(signal: AbortSignal | undefined): void {
    signal?.throwIfAborted();
    if (this.#closed) throw new StoreError("closed", "The store is closed: open it again.");
  }

  /** A write changes what `active()` serves for its tenant: the cache forgets it, whatever the outcome. */
  async #write<T>(signal: AbortSignal | undefined, tenantId: TenantId, fn: () => T | Promise<T>): Promise<T> {
    this.#open(signal);
    try {
      return await fn();
    } finally {
      this.#cache.invalidate(tenantId);
    }
  }
}
