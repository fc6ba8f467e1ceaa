import type { BundleHash, BundleManifest, JsonValue } from "../protocol/index.js";
import type { ActiveHead } from "./active-cache.js";
import type { RolloutState, ShadowState } from "./bundle-store.js";
import { percentOf } from "./store-inputs.js";

/** The memory store's records: what the SQL stores keep in rows. */

export interface Bundle {
  readonly code: string;
  readonly sourceMap: string | null;
  readonly manifest: BundleManifest;
  readonly bytes: number;
  readonly by: string;
  readonly at: number;
}

export interface Version {
  readonly version: number;
  readonly hash: BundleHash;
  readonly config: JsonValue;
  readonly gateReport: JsonValue | null;
  readonly by: string;
  readonly at: number;
}

export interface Tenant {
  readonly createdAt: number;
  updatedAt: number;
  nextVersion: number;
  active: number | null;
  /** Activation history, oldest first; the last entry is the active version. */
  readonly activations: number[];
  readonly versions: Map<number, Version>;
  rollout: { readonly version: number; readonly basisPoints: number; readonly at: number; readonly by: string } | null;
  shadow: { readonly version: number; readonly at: number; readonly by: string } | null;
}

export function newTenant(at: number): Tenant {
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
export function headOf(tenant: Tenant): ActiveHead | undefined {
  const version = tenant.active === null ? undefined : tenant.versions.get(tenant.active);
  if (!version) return undefined;
  const head = (v: Version) => ({ version: v.version, hash: v.hash, config: v.config });
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
export function candidatesOf(tenant: Tenant): { rollout: RolloutState | null; shadow: ShadowState | null } {
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
