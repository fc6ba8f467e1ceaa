import {
  type ActiveBundle,
  type BundleHash as BundleHashType,
  DEFAULT_LIMITS,
  type JsonValue,
  type TenantId,
} from "../../protocol/index.js";
import { ActiveBundleCache, type ActiveCacheOptions, integerOption } from "../active-cache.js";
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
import type {
  DecisionQuery,
  DecisionRow,
  LogSettingsChange,
  LogSettingsInput,
  PruneInput,
  StoredDecision,
  TenantLogSettings,
} from "../decision-log-store.js";
import { StoreError } from "../errors.js";
import { MemoryAudit } from "./memory-audit.js";
import { MemoryCandidates } from "./memory-candidates.js";
import { MemoryDecisionLog } from "./memory-decision-log.js";
import { type Bundle, headOf, newTenant, summaryOf, type Tenant, versionOf, versionRecordOf } from "./memory-tenant.js";
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
  percentOf,
} from "../store-inputs.js";
import { activeVersionError, noPrevious, rolloutEndDetail, tenantNotFound, versionInUse } from "../store-rules.js";

export interface MemoryStoreOptions extends ActiveCacheOptions {
  readonly maxBundleBytes?: number;
  readonly clock?: () => number;
}

/** The in-memory `BundleStore` for tests: the same contract as the SQLite store, nothing persisted. */
export class MemoryBundleStore implements BundleStore {
  readonly kind = "memory";
  readonly #tenants = new Map<TenantId, Tenant>();
  readonly #bundles = new Map<BundleHashType, Bundle>();
  readonly #audit = new MemoryAudit();
  readonly #decisions = new MemoryDecisionLog(this.#audit);
  readonly #cache: ActiveBundleCache;
  readonly #candidates: MemoryCandidates;
  readonly #maxBundleBytes: number;
  readonly #clock: () => number;
  #closed = false;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxBundleBytes = integerOption(
      "maxBundleBytes",
      options.maxBundleBytes ?? DEFAULT_LIMITS.maxBundleBytes,
      1,
      2 ** 31,
    );
    this.#clock = options.clock ?? Date.now;
    this.#cache = new ActiveBundleCache(
      {
        head: (tenantId) => {
          const tenant = this.#tenants.get(tenantId);
          return tenant && headOf(tenant);
        },
        code: (hash) => this.#bundles.get(hash),
      },
      options,
    );
    this.#candidates = new MemoryCandidates({
      audit: this.#audit,
      cache: this.#cache,
      clock: this.#clock,
      activate: (tenantId, version, by, at, completing) => this.#activate(tenantId, version, by, at, completing),
    });
  }

  async upload(input: UploadInput, signal?: AbortSignal): Promise<UploadResult> {
    const u = checkUpload(input, this.#maxBundleBytes);
    this.#open(signal);
    const at = this.#clock();
    let tenant = this.#tenants.get(u.tenantId);
    if (!tenant) {
      tenant = newTenant(at);
      this.#tenants.set(u.tenantId, tenant);
    }
    const version = tenant.nextVersion++;
    tenant.updatedAt = at;
    const bundleCreated = !this.#bundles.has(u.hash);
    if (bundleCreated) {
      this.#bundles.set(u.hash, {
        code: u.code,
        sourceMap: u.sourceMap,
        manifest: u.manifest,
        bytes: u.bytes,
        by: u.by,
        at,
      });
    }
    const latest = Math.max(0, ...tenant.versions.keys());
    const config =
      u.configJson === undefined
        ? (tenant.versions.get(latest)?.config ?? {})
        : (JSON.parse(u.configJson) as JsonValue);
    const gateReport = u.gateReportJson === null ? null : (JSON.parse(u.gateReportJson) as JsonValue);
    tenant.versions.set(version, { version, hash: u.hash, config, gateReport, by: u.by, at });
    this.#audit.write(at, u.tenantId, "upload", version, null, u.hash, u.by);
    const activated = u.activate && this.#activate(u.tenantId, version, u.by, at).changed;
    this.#cache.invalidate();
    const record = this.#record(u.tenantId, tenant, version);
    return { version: record, bundleCreated, activated };
  }

  async activate(input: VersionAction, signal?: AbortSignal): Promise<ActivationResult> {
    const { tenantId, version, by } = checkVersionAction(input);
    this.#open(signal);
    const result = this.#activate(tenantId, version, by, this.#clock());
    this.#cache.invalidate();
    return result;
  }

  async rollback(input: TenantAction, signal?: AbortSignal): Promise<ActivationResult> {
    const { tenantId, by } = checkTenantAction(input);
    this.#open(signal);
    const tenant = this.#tenant(tenantId);
    const current = tenant.active;
    if (current === null) throw noPrevious(tenantId);
    const at = this.#clock();
    const rollout = tenant.rollout;
    if (rollout) {
      tenant.rollout = null;
      tenant.updatedAt = at;
      const hash = versionOf(tenantId, tenant, current).hash;
      const endedRollout = { version: rollout.version, percent: percentOf(rollout.basisPoints) };
      this.#audit.write(at, tenantId, "rollback", current, rollout.version, hash, by, rolloutEndDetail(endedRollout));
      this.#cache.invalidate();
      return { tenantId, version: current, previous: current, changed: true, endedRollout };
    }
    const index = tenant.activations.findLastIndex((v) => v !== current);
    const target = tenant.activations[index];
    if (target === undefined) throw noPrevious(tenantId);
    tenant.activations.length = index + 1;
    tenant.active = target;
    tenant.updatedAt = at;
    this.#audit.write(at, tenantId, "rollback", target, current, versionOf(tenantId, tenant, target).hash, by);
    this.#cache.invalidate();
    return { tenantId, version: target, previous: current, changed: true, endedRollout: null };
  }

  async rollout(input: RolloutInput, signal?: AbortSignal): Promise<RolloutResult> {
    const rollout = checkRollout(input);
    this.#open(signal);
    return this.#candidates.rollout(this.#tenant(rollout.tenantId), rollout);
  }

  async shadow(input: ShadowInput, signal?: AbortSignal): Promise<ShadowResult> {
    const { tenantId, version, by } = checkShadow(input);
    this.#open(signal);
    return this.#candidates.shadow(this.#tenant(tenantId), tenantId, version, by);
  }

  async deleteVersion(input: VersionAction, signal?: AbortSignal): Promise<void> {
    const { tenantId, version, by } = checkVersionAction(input);
    this.#open(signal);
    const tenant = this.#tenant(tenantId);
    const { hash } = versionOf(tenantId, tenant, version);
    if (tenant.active === version) throw activeVersionError(tenantId, version);
    if (tenant.rollout?.version === version) throw versionInUse(tenantId, version, "rollout");
    if (tenant.shadow?.version === version) throw versionInUse(tenantId, version, "shadow");
    const at = this.#clock();
    tenant.versions.delete(version);
    const kept = tenant.activations.filter((v) => v !== version);
    tenant.activations.splice(0, tenant.activations.length, ...kept);
    tenant.updatedAt = at;
    const stillUsed = [...this.#tenants.values()].some((t) => [...t.versions.values()].some((v) => v.hash === hash));
    if (!stillUsed) this.#bundles.delete(hash);
    this.#audit.write(at, tenantId, "delete", version, null, hash, by);
    this.#cache.invalidate();
  }

  async tenants(signal?: AbortSignal): Promise<TenantSummary[]> {
    this.#open(signal);
    return [...this.#tenants.keys()].sort().map((id) => this.#summary(id));
  }

  async tenant(tenantId: TenantId, signal?: AbortSignal): Promise<TenantSummary | undefined> {
    const id = checkTenantId(tenantId);
    this.#open(signal);
    return this.#tenants.has(id) ? this.#summary(id) : undefined;
  }

  async versions(tenantId: TenantId, signal?: AbortSignal): Promise<VersionRecord[]> {
    const id = checkTenantId(tenantId);
    this.#open(signal);
    const tenant = this.#tenant(id);
    return [...tenant.versions.keys()].sort((a, b) => a - b).map((v) => this.#record(id, tenant, v));
  }

  async version(tenantId: TenantId, version?: number, signal?: AbortSignal): Promise<VersionDetail | undefined> {
    const id = checkTenantId(tenantId);
    const n = version === undefined ? undefined : checkVersion(version);
    this.#open(signal);
    const tenant = this.#tenants.get(id);
    const wanted = n ?? tenant?.active;
    const stored = wanted == null ? undefined : tenant?.versions.get(wanted);
    if (!tenant || !stored) return undefined;
    const bundle = this.#bundleOf(stored.hash);
    return {
      ...this.#record(id, tenant, stored.version),
      manifest: bundle.manifest,
      config: stored.config,
      gateReport: stored.gateReport,
      sourceMapBytes: bundle.sourceMap === null ? 0 : Buffer.byteLength(bundle.sourceMap, "utf8"),
    };
  }

  async bundle(hash: BundleHashType, signal?: AbortSignal): Promise<StoredBundle | undefined> {
    const checked = checkHash(hash);
    this.#open(signal);
    const b = this.#bundles.get(checked);
    if (!b) return undefined;
    return {
      hash: checked,
      code: b.code,
      sourceMap: b.sourceMap,
      manifest: b.manifest,
      bytes: b.bytes,
      uploadedBy: b.by,
      uploadedAt: new Date(b.at).toISOString(),
    };
  }

  async audit(query?: AuditQuery, signal?: AbortSignal): Promise<AuditEntry[]> {
    const tenantId = query?.tenantId === undefined ? undefined : checkTenantId(query.tenantId);
    const limit = checkAuditLimit(query);
    this.#open(signal);
    return this.#audit.entries(tenantId, limit);
  }

  async active(tenantId: TenantId, signal?: AbortSignal): Promise<ActiveBundle | undefined> {
    const id = checkTenantId(tenantId);
    this.#open(signal);
    return this.#cache.get(id);
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  async logSettings(tenantId?: TenantId, signal?: AbortSignal): Promise<TenantLogSettings[]> {
    const id = tenantId === undefined ? undefined : checkTenantId(tenantId);
    this.#open(signal);
    return this.#decisions.logSettings(id);
  }

  async setLogSettings(input: LogSettingsInput, signal?: AbortSignal): Promise<LogSettingsChange> {
    this.#open(signal);
    return this.#decisions.setLogSettings(input, this.#clock());
  }

  async appendDecisions(rows: readonly DecisionRow[], signal?: AbortSignal): Promise<number> {
    this.#open(signal);
    return this.#decisions.append(rows);
  }

  async decisions(query: DecisionQuery, signal?: AbortSignal): Promise<StoredDecision[]> {
    this.#open(signal);
    return this.#decisions.decisions(query);
  }

  async pruneDecisions(input: PruneInput, signal?: AbortSignal): Promise<number> {
    this.#open(signal);
    return this.#decisions.prune(input);
  }

  /** Activates `version`, ending any rollout; `completing` marks the activation `rollout --percent 100` makes. */
  #activate(tenantId: TenantId, version: number, by: string, at: number, completing = false): ActivationResult {
    const tenant = this.#tenant(tenantId);
    const { hash } = versionOf(tenantId, tenant, version);
    const current = tenant.active;
    const rollout = tenant.rollout;
    const endedRollout = rollout && { version: rollout.version, percent: percentOf(rollout.basisPoints) };
    if (current === version && !rollout) return { tenantId, version, previous: current, changed: false, endedRollout };
    tenant.rollout = null;
    tenant.updatedAt = at;
    if (current !== version) {
      tenant.activations.push(version);
      tenant.active = version;
    }
    this.#audit.write(at, tenantId, "activate", version, current, hash, by, rolloutEndDetail(endedRollout, completing));
    return { tenantId, version, previous: current, changed: true, endedRollout };
  }

  #open(signal: AbortSignal | undefined): void {
    signal?.throwIfAborted();
    if (this.#closed) throw new StoreError("closed", "The store is closed: open it again.");
  }

  #tenant(tenantId: TenantId): Tenant {
    const tenant = this.#tenants.get(tenantId);
    if (!tenant) throw tenantNotFound(tenantId);
    return tenant;
  }

  #bundleOf(hash: BundleHashType): Bundle {
    const bundle = this.#bundles.get(hash);
    if (!bundle) throw new StoreError("corrupt", `Bundle ${hash} is missing from the memory store.`);
    return bundle;
  }

  #record(tenantId: TenantId, tenant: Tenant, version: number): VersionRecord {
    const v = versionOf(tenantId, tenant, version);
    return versionRecordOf(tenantId, tenant, v, this.#bundleOf(v.hash));
  }

  #summary(tenantId: TenantId): TenantSummary {
    return summaryOf(tenantId, this.#tenant(tenantId));
  }
}
