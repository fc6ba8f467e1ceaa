import type { BundleHash as BundleHashType, JsonValue, TenantId } from "../../protocol/index.js";
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
import { MemoryCheckpointLedger } from "../checkpoint-ledger.js";
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
import { type CheckedRollout, type CheckedUpload, percentOf } from "../store-inputs.js";
import { activeVersionError, noPrevious, rolloutEndDetail, tenantNotFound, versionInUse } from "../store-rules.js";
import { MemoryAudit } from "./memory-audit.js";
import { MemoryCandidates } from "./memory-candidates.js";
import { MemoryDecisionLog } from "./memory-decision-log.js";
import { MemoryQuarantine } from "./memory-quarantine.js";
import {
  type BundleRow,
  headOf,
  newTenant,
  summaryOf,
  type TenantRow,
  versionOf,
  versionRecordOf,
} from "./memory-tenant.js";

/** The in-memory backend: the same contract as SQLite's, on maps, nothing persisted. */
export class MemoryDriver implements StoreDriver {
  readonly checkpoints: MemoryCheckpointLedger;
  readonly quarantine: MemoryQuarantine;
  readonly #tenants = new Map<TenantId, TenantRow>();
  readonly #bundles = new Map<BundleHashType, BundleRow>();
  readonly #audit = new MemoryAudit();
  readonly #decisions = new MemoryDecisionLog(this.#audit);
  readonly #candidates = new MemoryCandidates({
    audit: this.#audit,
    activate: (tenantId, version, by, at, completing) => this.#activate(tenantId, version, by, at, completing),
  });

  constructor(clock: () => number) {
    this.checkpoints = new MemoryCheckpointLedger(clock);
    this.quarantine = new MemoryQuarantine({ tenant: (id) => this.#tenants.get(id), audit: this.#audit, clock });
  }

  head(tenantId: TenantId): ActiveHead | undefined {
    const tenant = this.#tenants.get(tenantId);
    return tenant && headOf(tenant);
  }

  code(hash: BundleHashType): CachedCode | undefined {
    return this.#bundles.get(hash);
  }

  upload(u: CheckedUpload, at: number): UploadResult {
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
    const record = this.#record(u.tenantId, tenant, version);
    return { version: record, bundleCreated, activated };
  }

  activate({ tenantId, version, by }: VersionAction, at: number): ActivationResult {
    return this.#activate(tenantId, version, by, at);
  }

  rollback({ tenantId, by }: TenantAction, at: number): ActivationResult {
    const tenant = this.#tenant(tenantId);
    const current = tenant.active;
    if (current === null) throw noPrevious(tenantId);
    const rollout = tenant.rollout;
    if (rollout) {
      tenant.rollout = null;
      tenant.updatedAt = at;
      const hash = versionOf(tenantId, tenant, current).hash;
      const endedRollout = { version: rollout.version, percent: percentOf(rollout.basisPoints) };
      this.#audit.write(at, tenantId, "rollback", current, rollout.version, hash, by, rolloutEndDetail(endedRollout));
      return { tenantId, version: current, previous: current, changed: true, endedRollout };
    }
    const index = tenant.activations.findLastIndex((v) => v !== current);
    const target = tenant.activations[index];
    if (target === undefined) throw noPrevious(tenantId);
    tenant.activations.length = index + 1;
    tenant.active = target;
    tenant.updatedAt = at;
    this.#audit.write(at, tenantId, "rollback", target, current, versionOf(tenantId, tenant, target).hash, by);
    return { tenantId, version: target, previous: current, changed: true, endedRollout: null };
  }

  rollout(rollout: CheckedRollout, at: number): RolloutResult {
    return this.#candidates.rollout(this.#tenant(rollout.tenantId), rollout, at);
  }

  shadow({ tenantId, version, by }: ShadowInput, at: number): ShadowResult {
    return this.#candidates.shadow(this.#tenant(tenantId), tenantId, version, by, at);
  }

  deleteVersion({ tenantId, version, by }: VersionAction, at: number): void {
    const tenant = this.#tenant(tenantId);
    const { hash } = versionOf(tenantId, tenant, version);
    if (tenant.active === version) throw activeVersionError(tenantId, version);
    if (tenant.rollout?.version === version) throw versionInUse(tenantId, version, "rollout");
    if (tenant.shadow?.version === version) throw versionInUse(tenantId, version, "shadow");
    tenant.versions.delete(version);
    const kept = tenant.activations.filter((v) => v !== version);
    tenant.activations.splice(0, tenant.activations.length, ...kept);
    tenant.updatedAt = at;
    const stillUsed = [...this.#tenants.values()].some((t) => [...t.versions.values()].some((v) => v.hash === hash));
    if (!stillUsed) this.#bundles.delete(hash);
    this.#audit.write(at, tenantId, "delete", version, null, hash, by);
  }

  tenants(tenantId: TenantId | undefined): TenantSummary[] {
    if (tenantId !== undefined) return this.#tenants.has(tenantId) ? [this.#summary(tenantId)] : [];
    return [...this.#tenants.keys()].sort().map((id) => this.#summary(id));
  }

  versions(id: TenantId): VersionRecord[] {
    const tenant = this.#tenant(id);
    return [...tenant.versions.keys()].sort((a, b) => a - b).map((v) => this.#record(id, tenant, v));
  }

  version(id: TenantId, n: number | undefined): VersionDetail | undefined {
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

  bundle(checked: BundleHashType): StoredBundle | undefined {
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

  audit(tenantId: TenantId | undefined, limit: number): AuditEntry[] {
    return this.#audit.entries(tenantId, limit);
  }

  logSettings(tenantId: TenantId | undefined): TenantLogSettings[] {
    return this.#decisions.logSettings(tenantId);
  }

  setLogSettings(input: LogSettingsInput, at: number): LogSettingsChange {
    return this.#decisions.setLogSettings(input, at);
  }

  appendDecisions(rows: readonly DecisionRow[]): number {
    return this.#decisions.append(rows);
  }

  decisions(query: CheckedDecisionQuery): StoredDecision[] {
    return this.#decisions.decisions(query);
  }

  pruneDecisions(input: PruneInput): number {
    return this.#decisions.prune(input);
  }

  async close(): Promise<void> {}

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

  #tenant(tenantId: TenantId): TenantRow {
    const tenant = this.#tenants.get(tenantId);
    if (!tenant) throw tenantNotFound(tenantId);
    return tenant;
  }

  #bundleOf(hash: BundleHashType): BundleRow {
    const bundle = this.#bundles.get(hash);
    if (!bundle) throw new StoreError("corrupt", `Bundle ${hash} is missing from the memory store.`);
    return bundle;
  }

  #record(tenantId: TenantId, tenant: TenantRow, version: number): VersionRecord {
    const v = versionOf(tenantId, tenant, version);
    return versionRecordOf(tenantId, tenant, v, this.#bundleOf(v.hash));
  }

  #summary(tenantId: TenantId): TenantSummary {
    return summaryOf(tenantId, this.#tenant(tenantId));
  }
}
