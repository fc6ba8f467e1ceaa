import type { BundleHash, TenantId } from "../protocol/index.js";
import type { ActiveBundleCache, ActiveReader } from "./active-cache.js";
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
} from "./bundle-store.js";
import type {
  CheckedDecisionQuery,
  DecisionRow,
  LogSettingsChange,
  LogSettingsInput,
  PruneInput,
  StoredDecision,
  TenantLogSettings,
} from "./decision-log-store.js";
import type { CheckedRollout, CheckedUpload } from "./store-inputs.js";

type MaybePromise<T> = T | Promise<T>;

/**
 * What a backend implements under the checked front end (`CheckedStore`, checked-store.ts): inputs arrive
 * checked, times as milliseconds since the epoch, and failures leave as `StoreError` with a message that
 * names the store. The front end owns the rest: input checks, the closed state, the clock and the active
 * bundle cache. Synchronous backends (memory, SQLite) return values, PostgreSQL promises.
 */
export interface StoreDriver extends ActiveReader {
  upload(upload: CheckedUpload, at: number): MaybePromise<UploadResult>;
  activate(action: VersionAction, at: number): MaybePromise<ActivationResult>;
  rollback(action: TenantAction, at: number): MaybePromise<ActivationResult>;
  rollout(rollout: CheckedRollout, at: number): MaybePromise<RolloutResult>;
  shadow(input: ShadowInput, at: number): MaybePromise<ShadowResult>;
  deleteVersion(action: VersionAction, at: number): MaybePromise<void>;
  tenants(tenantId: TenantId | undefined): MaybePromise<TenantSummary[]>;
  versions(tenantId: TenantId): MaybePromise<VersionRecord[]>;
  version(tenantId: TenantId, version: number | undefined): MaybePromise<VersionDetail | undefined>;
  bundle(hash: BundleHash): MaybePromise<StoredBundle | undefined>;
  audit(tenantId: TenantId | undefined, limit: number): MaybePromise<AuditEntry[]>;
  logSettings(tenantId: TenantId | undefined): MaybePromise<TenantLogSettings[]>;
  setLogSettings(input: LogSettingsInput, at: number): MaybePromise<LogSettingsChange>;
  appendDecisions(rows: readonly DecisionRow[]): MaybePromise<number>;
  decisions(query: CheckedDecisionQuery): MaybePromise<StoredDecision[]>;
  pruneDecisions(input: PruneInput): MaybePromise<number>;
  /** Given the cache the front end keeps, once: a backend told of changes (LISTEN/NOTIFY) invalidates it. */
  attach?(cache: ActiveBundleCache): void;
  /** Called before each active bundle is served: a backend told of changes starts listening here. */
  watch?(): Promise<void>;
  close(): Promise<void>;
}
