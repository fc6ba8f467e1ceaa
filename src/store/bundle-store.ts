import type { BundleHash, BundleManifest, BundleSource, HookPoint, JsonValue, TenantId } from "../protocol/index.js";
import type { CheckpointLedger } from "./checkpoint-ledger.js";
import type { DecisionLogStore } from "./decision-log-store.js";
import type { StoreQuarantine } from "./quarantine-rules.js";

/**
 * A store of tenant hook bundles: immutable, content-addressed bundles; monotonic versions per tenant
 * (each a bundle plus the tenant's config for it); one active version per tenant; an activation history
 * that `rollback` walks back; and an audit log of every upload, activation, rollback and deletion.
 *
 * Every method validates its input (tenant ids with `TenantId`, versions as positive integers) and
 * rejects with a `StoreError` whose `code` says what went wrong. `active` is the runtime's
 * `BundleSource`: cached by bundle hash, and it sees activations made by other processes within the
 * store's refresh interval (SQLite) or as soon as they are notified (PostgreSQL); while a PostgreSQL
 * store is unreachable it serves the last known active versions. A run resolves its bundle once and
 * keeps that version. Three implementations: `MemoryBundleStore`, `SqliteBundleStore` (one machine),
 * `PostgresBundleStore` (many hosts); `openStore(location)` picks one from a path or a URL.
 *
 * ```ts
 * const store = await openStore(process.env.ISOHOOK_STORE ?? ".isohook/store.db");
 * const { version } = await store.upload({ tenantId, code, sourceMap, manifest, by: "ops", activate: true });
 * await store.rollback({ tenantId, by: "ops" });
 * ```
 */
export interface BundleStore extends BundleSource, DecisionLogStore {
  readonly kind: "sqlite" | "postgres" | "memory";
  /** Which checkpoints were resumed, for every runtime on this store: a paused run goes on once. */
  readonly checkpoints: CheckpointLedger;
  /** Quarantine shared by every host on this store: the book hosts report to, and what operators list and lift. */
  readonly quarantine: StoreQuarantine;
  /**
   * Stores a new version in one transaction: the bundle (kept once per hash; `manifest.hash` must be
   * the SHA-256 of `code`), a new version number allocated inside the transaction, the config (the
   * latest version's config when omitted, `{}` for a new tenant), an audit entry and, with `activate`,
   * the activation. A failure leaves the store as it was.
   */
  upload(input: UploadInput, signal?: AbortSignal): Promise<UploadResult>;
  /** Makes `version` the tenant's active version. Activating the active version changes nothing. */
  activate(input: VersionAction, signal?: AbortSignal): Promise<ActivationResult>;
  /**
   * Ends a percentage rollout in progress (every run uses the active version again; `endedRollout` says
   * which); with none, returns the tenant to the version that was active before the current activation.
   */
  rollback(input: TenantAction, signal?: AbortSignal): Promise<ActivationResult>;
  /**
   * Starts or changes a percentage rollout: `percent` (0 < p < 100, in steps of 0.01) of the tenant's runs,
   * a stable share by a hash of the run id, use `version` instead of the active version. `percent: 100`
   * activates `version` and ends the rollout. Any activation or rollback ends a rollout. Audited (`rollout`,
   * or `activate` with `percent: 100`); needs an active version.
   */
  rollout(input: RolloutInput, signal?: AbortSignal): Promise<RolloutResult>;
  /**
   * Puts `version` in shadow mode (it runs after the deciding version on live calls and decides nothing),
   * replacing any shadow; `version: null` turns shadow mode off. Audited (`shadow`, `shadow_off`).
   */
  shadow(input: ShadowInput, signal?: AbortSignal): Promise<ShadowResult>;
  /** Deletes a version that is not active, rolled out or shadowed; its number is never reused. */
  deleteVersion(input: VersionAction, signal?: AbortSignal): Promise<void>;
  /** Every tenant with at least one version ever uploaded, by id. */
  tenants(signal?: AbortSignal): Promise<TenantSummary[]>;
  tenant(tenantId: TenantId, signal?: AbortSignal): Promise<TenantSummary | undefined>;
  /** The tenant's versions, oldest first. Rejects with `not_found` for an unknown tenant. */
  versions(tenantId: TenantId, signal?: AbortSignal): Promise<VersionRecord[]>;
  /** One version with its manifest, config and gate report; without `version`, the active one. */
  version(tenantId: TenantId, version?: number, signal?: AbortSignal): Promise<VersionDetail | undefined>;
  /** A bundle's code and source map by hash. */
  bundle(hash: BundleHash, signal?: AbortSignal): Promise<StoredBundle | undefined>;
  /** Audit entries oldest first: the last `limit` (default 100) matching ones. */
  audit(query?: AuditQuery, signal?: AbortSignal): Promise<AuditEntry[]>;
  close(): Promise<void>;
}

export interface UploadInput {
  readonly tenantId: TenantId;
  readonly code: string;
  readonly sourceMap?: string;
  readonly manifest: BundleManifest;
  /** The tenant's config for this version (`ctx.config`); defaults to the latest version's. */
  readonly config?: JsonValue;
  /** The deploy gate's report, kept for `inspect`. */
  readonly gateReport?: JsonValue;
  /** Who uploaded (an operator name); 1–128 printable characters. */
  readonly by: string;
  readonly activate?: boolean;
}

export interface TenantAction {
  readonly tenantId: TenantId;
  readonly by: string;
}

export interface VersionAction extends TenantAction {
  readonly version: number;
}

export interface RolloutInput extends VersionAction {
  /** The share of runs that use `version`: more than 0, at most 100 (= activate), in steps of 0.01. */
  readonly percent: number;
}

export interface ShadowInput extends TenantAction {
  /** The version to shadow, or null to turn shadow mode off. */
  readonly version: number | null;
}

/** A rollout in progress: `percent` of the tenant's runs use `version`. */
export interface RolloutState {
  readonly version: number;
  readonly hash: BundleHash;
  readonly percent: number;
  /** When this rollout was started or last changed (ISO 8601), and by whom. */
  readonly since: string;
  readonly by: string;
}

/** A version in shadow mode. */
export interface ShadowState {
  readonly version: number;
  readonly hash: BundleHash;
  /** ISO 8601. */
  readonly since: string;
  readonly by: string;
}

export interface RolloutResult {
  readonly tenantId: TenantId;
  /** The candidate. */
  readonly version: number;
  readonly percent: number;
  /** The active version now (the candidate itself after `percent: 100`). */
  readonly activeVersion: number;
  /** The rollout before this change, or null. */
  readonly previous: { readonly version: number; readonly percent: number } | null;
  /** True when `percent: 100` made the candidate the active version. */
  readonly activated: boolean;
  readonly changed: boolean;
}

export interface ShadowResult {
  readonly tenantId: TenantId;
  /** The version in shadow mode now, or null. */
  readonly version: number | null;
  readonly previous: number | null;
  readonly changed: boolean;
}

export interface UploadResult {
  readonly version: VersionRecord;
  /** False when a bundle with this hash was already stored (the new version shares it). */
  readonly bundleCreated: boolean;
  readonly activated: boolean;
}

export interface ActivationResult {
  readonly tenantId: TenantId;
  /** The version active now. */
  readonly version: number;
  /** The version active before, or null. */
  readonly previous: number | null;
  readonly changed: boolean;
  /** The rollout this change ended (a rollback of a rollout, or an activation during one), or null. */
  readonly endedRollout: { readonly version: number; readonly percent: number } | null;
}

export interface TenantSummary {
  readonly tenantId: TenantId;
  readonly activeVersion: number | null;
  readonly activeHash: BundleHash | null;
  readonly latestVersion: number | null;
  readonly versionCount: number;
  readonly rollout: RolloutState | null;
  readonly shadow: ShadowState | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface VersionRecord {
  readonly tenantId: TenantId;
  readonly version: number;
  readonly hash: BundleHash;
  readonly bytes: number;
  readonly hookPoints: readonly HookPoint[];
  readonly uploadedBy: string;
  /** ISO 8601. */
  readonly uploadedAt: string;
  readonly active: boolean;
  /** The share of runs this version gets in a rollout in progress, or null. */
  readonly rolloutPercent: number | null;
  /** True while this version is in shadow mode. */
  readonly shadow: boolean;
}

export interface VersionDetail extends VersionRecord {
  readonly manifest: BundleManifest;
  readonly config: JsonValue;
  readonly gateReport: JsonValue | null;
  readonly sourceMapBytes: number;
}

export interface StoredBundle {
  readonly hash: BundleHash;
  readonly code: string;
  readonly sourceMap: string | null;
  readonly manifest: BundleManifest;
  readonly bytes: number;
  /** Who first stored this content, and when. */
  readonly uploadedBy: string;
  readonly uploadedAt: string;
}

/**
 * `log`: the tenant's decision-log settings changed (`detail` says to what). `rollout`: a rollout started
 * or changed its share (`detail`, e.g. `50 % of runs`); `shadow`, `shadow_off`: shadow mode on or off;
 * `release`: an operator lifted the quarantine of the version's bundle (`detail` says which entry).
 */
export type AuditType =
  | "upload"
  | "activate"
  | "rollback"
  | "delete"
  | "log"
  | "rollout"
  | "shadow"
  | "shadow_off"
  | "release";

export interface AuditEntry {
  readonly id: number;
  readonly at: string;
  readonly tenantId: TenantId;
  readonly type: AuditType;
  /**
   * The version uploaded, activated, rolled back to, deleted, rolled out, or put in or out of shadow mode;
   * null for a `log` change. A rollback that ended a rollout names the active version, which every run uses
   * again.
   */
  readonly version: number | null;
  /**
   * For activate and rollback: the version active before (the rolled-out candidate, for a rollback that
   * ended a rollout); for rollout and shadow: the active version beside it.
   */
  readonly fromVersion: number | null;
  readonly hash: BundleHash | null;
  readonly by: string;
  /**
   * What changed beyond the version (`log`: the new settings, or `off`; `rollout`: the share; an
   * activation or rollback that ended a rollout: `rollout of v2 at 50 % ended`, or `rollout complete` for
   * `--percent 100`).
   */
  readonly detail: string | null;
}

export interface AuditQuery {
  readonly tenantId?: TenantId;
  /** 1–10 000, default 100. */
  readonly limit?: number;
}
