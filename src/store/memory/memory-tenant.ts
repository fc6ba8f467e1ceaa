import type { BundleHash, BundleManifest, JsonValue, TenantId } from "../../protocol/index.js";
import type { ActiveHead } from "../active-cache.js";
import type { RolloutState, ShadowState, TenantSummary, VersionRecord } from "../bundle-store.js";
import { percentOf } from "../store-inputs.js";
import { versionNotFound } from "../store-rules.js";

/** The memory store's records: what the SQL stores keep in rows. */

export interface BundleRow {
  readonly code: string;
  readonly sourceMap: string | null;
  readonly manifest: BundleManifest;
  readonly bytes: number;
  readonly by: string;
  readonly at: number;
}

export interface VersionRow {
  readonly version: number;
  readonly hash: BundleHash;
  readonly config: JsonValue;
  readonly gateReport: JsonValue | null;
  readonly by: string;
  readonly at: number;
}

export interface TenantRow {
  readonly createdAt: number;
  updatedAt: number;
  nextVersion: number;
  active: number | null;
  /** Activation history, oldest first; the last entry is the active version. */
  readonly activations: number[];
  readonly versions: Map<number, VersionRow>;
  rollout: { readonly version: number; readonly basisPoints: number; readonly at: number; readonly by: string } | null;
  shadow: { readonly version: number; readonly at: number; readonly by: string } | null;
}

export function newTenant(at: number): TenantRow {
  return {
    createdAt: at,
    updatedAt: at,
    nextVersion: 1,
    active: null,
    activations: [],
    versions: new Map(),
    rollout: null,
    shadow: null,
  };
}

/** The tenant's active version with its rollout and shadow candidates, as the active-bundle cache reads it. */
export function headOf(tenant: TenantRow): ActiveHead | undefined {
  const version = tenant.active === null ? undefined : tenant.versions.get(tenant.active);
  if (!version) return undefined;
  const head = (v: VersionRow) => ({ version: v.version, hash: v.hash, config: v.config });
  const rollout = tenant.rollout && tenant.versions.get(tenant.rollout.version);
  const shadow = tenant.shadow && tenant.versions.get(tenant.shadow.version);
  return {
    ...head(version),
    ...(rollout && tenant.rollout
      ? { rollout: { ...head(rollout), percent: percentOf(tenant.rollout.basisPoints) } }
      : {}),
    ...(shadow ? { shadow: head(shadow) } : {}),
  };
}

/** The tenant's rollout and shadow as `TenantSummary` shows them. */
export function candidatesOf(tenant: TenantRow): { rollout: RolloutState | null; shadow: ShadowState | null } {
  const hashOf = (version: number) => tenant.versions.get(version)?.hash as BundleHash;
  const iso = (ms: number) => new Date(ms).toISOString();
  const { rollout, shadow } = tenant;
  return {
    rollout: rollout && {
      version: rollout.version,
      hash: hashOf(rollout.version),
      percent: percentOf(rollout.basisPoints),
      since: iso(rollout.at),
      by: rollout.by,
    },
    shadow: shadow && { version: shadow.version, hash: hashOf(shadow.version), since: iso(shadow.at), by: shadow.by },
  };
}

/** The tenant's stored version `version`; rejects with not_found when there is none. */
export function versionOf(tenantId: TenantId, tenant: TenantRow, version: number): VersionRow {
  const found = tenant.versions.get(version);
  if (!found) throw versionNotFound(tenantId, version);
  return found;
}

/** A stored version as `VersionRecord` shows it, with its bundle's size and hook points. */
export function versionRecordOf(
  tenantId: TenantId,
  tenant: TenantRow,
  v: VersionRow,
  bundle: BundleRow,
): VersionRecord {
  return {
    tenantId,
    version: v.version,
    hash: v.hash,
    bytes: bundle.bytes,
    hookPoints: bundle.manifest.hookPoints,
    uploadedBy: v.by,
    uploadedAt: new Date(v.at).toISOString(),
    active: tenant.active === v.version,
    rolloutPercent: tenant.rollout?.version === v.version ? percentOf(tenant.rollout.basisPoints) : null,
    shadow: tenant.shadow?.version === v.version,
  };
}

/** The tenant as `TenantSummary` shows it. */
export function summaryOf(tenantId: TenantId, tenant: TenantRow): TenantSummary {
  const versions = [...tenant.versions.keys()];
  return {
    tenantId,
    activeVersion: tenant.active,
    activeHash: tenant.active === null ? null : versionOf(tenantId, tenant, tenant.active).hash,
    latestVersion: versions.length === 0 ? null : Math.max(...versions),
    versionCount: versions.length,
    ...candidatesOf(tenant),
    createdAt: new Date(tenant.createdAt).toISOString(),
    updatedAt: new Date(tenant.updatedAt).toISOString(),
  };
}
