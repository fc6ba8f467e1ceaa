import type { BundleHash, TenantId } from "../protocol/index.js";
import type { ActiveHead, CachedCode } from "./active-cache.js";
import type {
  AuditEntry,
  AuditType,
  StoredBundle,
  TenantSummary,
  VersionDetail,
  VersionRecord,
} from "./bundle-store.js";
import { percentOf, readJson, readManifest } from "./store-inputs.js";

/**
 * The rows both SQL stores select, column for column (times in ms since the epoch, flags as 0/1), and
 * their one mapping to the records of the BundleStore contract.
 */

export interface VersionRow {
  tenant_id: TenantId;
  version: number;
  bundle_hash: BundleHash;
  uploaded_by: string;
  uploaded_at: number;
  manifest: string;
  bytes: number;
  active: number;
  rollout_bp: number | null;
  shadow: number;
}

export interface VersionDetailRow extends VersionRow {
  config: string;
  gate_report: string | null;
  source_map_bytes: number | null;
}

export interface TenantRow {
  id: TenantId;
  created_at: number;
  updated_at: number;
  active_version: number | null;
  active_hash: BundleHash | null;
  latest: number | null;
  count: number;
  rollout_version: number | null;
  rollout_hash: BundleHash | null;
  rollout_bp: number | null;
  rollout_at: number | null;
  rollout_by: string | null;
  shadow_version: number | null;
  shadow_hash: BundleHash | null;
  shadow_at: number | null;
  shadow_by: string | null;
}

export interface BundleRow {
  hash: BundleHash;
  code: string;
  source_map: string | null;
  manifest: string;
  bytes: number;
  uploaded_by: string;
  uploaded_at: number;
}

export interface AuditRow {
  id: number;
  at: number;
  tenant_id: TenantId;
  type: AuditType;
  version: number | null;
  from_version: number | null;
  bundle_hash: BundleHash | null;
  by: string;
  detail: string | null;
}

export interface HeadRow {
  version: number;
  hash: BundleHash;
  config: string;
  rollout_version: number | null;
  rollout_hash: BundleHash | null;
  rollout_config: string | null;
  rollout_bp: number | null;
  shadow_version: number | null;
  shadow_hash: BundleHash | null;
  shadow_config: string | null;
}

export interface CodeRow {
  code: string;
  source_map: string | null;
  manifest: string;
  bytes: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function toVersionRecord(row: VersionRow): VersionRecord {
  const manifest = readManifest(row.manifest, row.bundle_hash);
  return {
    tenantId: row.tenant_id,
    version: row.version,
    hash: row.bundle_hash,
    bytes: row.bytes,
    hookPoints: manifest.hookPoints,
    uploadedBy: row.uploaded_by,
    uploadedAt: iso(row.uploaded_at),
    active: row.active === 1,
    rolloutPercent: row.rollout_bp === null ? null : percentOf(Number(row.rollout_bp)),
    shadow: row.shadow === 1,
  };
}

export function toVersionDetail(row: VersionDetailRow): VersionDetail {
  return {
    ...toVersionRecord(row),
    manifest: readManifest(row.manifest, row.bundle_hash),
    config: readJson(row.config, "config"),
    gateReport: row.gate_report === null ? null : readJson(row.gate_report, "gate report"),
    sourceMapBytes: row.source_map_bytes ?? 0,
  };
}

export function toTenantSummary(row: TenantRow): TenantSummary {
  return {
    tenantId: row.id,
    activeVersion: row.active_version,
    activeHash: row.active_hash,
    latestVersion: row.latest,
    versionCount: row.count,
    rollout:
      row.rollout_version === null || row.rollout_hash === null
        ? null
        : {
            version: row.rollout_version,
            hash: row.rollout_hash,
            percent: percentOf(Number(row.rollout_bp)),
            since: iso(Number(row.rollout_at)),
            by: String(row.rollout_by),
          },
    shadow:
      row.shadow_version === null || row.shadow_hash === null
        ? null
        : {
            version: row.shadow_version,
            hash: row.shadow_hash,
            since: iso(Number(row.shadow_at)),
            by: String(row.shadow_by),
          },
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export function toStoredBundle(row: BundleRow): StoredBundle {
  return {
    hash: row.hash,
    code: row.code,
    sourceMap: row.source_map,
    manifest: readManifest(row.manifest, row.hash),
    bytes: row.bytes,
    uploadedBy: row.uploaded_by,
    uploadedAt: iso(row.uploaded_at),
  };
}

export function toAuditEntry(row: AuditRow): AuditEntry {
  return {
    id: row.id,
    at: iso(row.at),
    tenantId: row.tenant_id,
    type: row.type,
    version: row.version,
    fromVersion: row.from_version,
    hash: row.bundle_hash,
    by: row.by,
    detail: row.detail,
  };
}

export function toActiveHead(row: HeadRow, tenantId: TenantId): ActiveHead {
  const configOf = (json: string, version: number) => readJson(json, `config of ${tenantId} v${version}`);
  const { rollout_version: rv, rollout_hash: rh, rollout_config: rc, shadow_version: sv, shadow_hash: sh } = row;
  return {
    version: row.version,
    hash: row.hash,
    config: configOf(row.config, row.version),
    ...(rv !== null && rh !== null && rc !== null
      ? { rollout: { version: rv, hash: rh, config: configOf(rc, rv), percent: percentOf(Number(row.rollout_bp)) } }
      : {}),
    ...(sv !== null && sh !== null && row.shadow_config !== null
      ? { shadow: { version: sv, hash: sh, config: configOf(row.shadow_config, sv) } }
      : {}),
  };
}

export function toCachedCode(row: CodeRow, hash: BundleHash): CachedCode {
  return { code: row.code, sourceMap: row.source_map, manifest: readManifest(row.manifest, hash), bytes: row.bytes };
}
