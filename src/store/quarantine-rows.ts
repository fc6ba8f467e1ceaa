import type { FleetQuarantine } from "../dispatch/index.js";
import type { BundleHash, FailureCode, TenantId } from "../protocol/index.js";
import type { QuarantineRecord } from "./quarantine-rules.js";

/** A `quarantines` row as both SQL stores read it (times in ms, codes and hosts as JSON arrays). */
export interface QuarantineRow {
  tenant_id: string;
  bundle_hash: string;
  strike: number;
  since: number;
  until: number;
  failures: number;
  codes: string;
  hosts: string;
  released_at: number | null;
  released_by: string | null;
  changed_at: number;
  versions?: string | null;
}

export function toFleetQuarantine(row: QuarantineRow): FleetQuarantine {
  return {
    tenantId: row.tenant_id as TenantId,
    bundleHash: row.bundle_hash as BundleHash,
    strike: Number(row.strike),
    since: Number(row.since),
    until: Number(row.until),
    failures: Number(row.failures),
    codes: JSON.parse(row.codes) as FailureCode[],
    hosts: JSON.parse(row.hosts) as string[],
    releasedAt: row.released_at === null ? null : Number(row.released_at),
    releasedBy: row.released_by,
  };
}

export function toQuarantineRecord(row: QuarantineRow): QuarantineRecord {
  const versions = (row.versions ?? "")
    .split(",")
    .filter((v) => v !== "")
    .map(Number);
  return { ...toFleetQuarantine(row), versions: versions.sort((a, b) => a - b) };
}
