import type { FailureReport, FleetQuarantine, QuarantineLedger, QuarantineSettings } from "../dispatch/index.js";
import { type BundleHash, type FailureCode, QUARANTINE_CODES, type TenantId } from "../protocol/index.js";
import type { VersionAction } from "./bundle-store.js";
import { StoreError } from "./errors.js";
import { checkHash, checkTenantId } from "./store-inputs.js";

/** The store's side of fleet-wide quarantine: the ledger hosts report to, and what operators see and lift. */
export interface StoreQuarantine extends QuarantineLedger {
  /** Bundles in quarantine now (with `all`, also those whose quarantine ended), newest first. */
  list(query?: QuarantineQuery, signal?: AbortSignal): Promise<QuarantineRecord[]>;
  /**
   * Lifts the quarantine of the bundle of `version` before its end: every host lets its calls through again
   * as soon as it hears (the way an activation reaches them), and the next failures count from zero, while
   * the cooldown still doubles at the next entry. Audited (`release`). Rejects with `not_found` when the
   * version's bundle is not in quarantine.
   */
  release(input: VersionAction, signal?: AbortSignal): Promise<QuarantineRecord>;
}

export interface QuarantineQuery {
  readonly tenantId?: TenantId;
  /** Include quarantines that ended or were released. */
  readonly all?: boolean;
}

/** A quarantine with the tenant's versions that run its bundle. */
export interface QuarantineRecord extends FleetQuarantine {
  readonly versions: readonly number[];
}

/** One failure row as the stores keep it. */
export interface FailureRow {
  readonly at: number;
  readonly host: string;
  readonly code: FailureCode;
  readonly weight: number;
}

/** Whether the entry keeps its bundle's calls out at `now`. */
export function inForce(entry: FleetQuarantine | undefined, now: number): entry is FleetQuarantine {
  return entry !== undefined && entry.releasedAt === null && now < entry.until;
}

/** Failures count from the later of the window's start and the end of the last quarantine. */
export function countFrom(previous: FleetQuarantine | undefined, now: number, settings: QuarantineSettings): number {
  const ended = previous === undefined ? Number.NEGATIVE_INFINITY : (previous.releasedAt ?? previous.until);
  return Math.max(now - settings.windowMs, ended);
}

/**
 * The book's rule over every host's failures (the same as `LocalQuarantineBook`'s over one host's): the
 * failures since `countFrom`, each counted up to K times, reaching K start an entry whose cooldown
 * doubles with each strike, unless the bundle stayed quiet `forgetAfterMs` after the last one.
 */
export function nextQuarantine(
  key: { readonly tenantId: TenantId; readonly bundleHash: BundleHash },
  previous: FleetQuarantine | undefined,
  failures: readonly FailureRow[],
  now: number,
  settings: QuarantineSettings,
): FleetQuarantine | undefined {
  const from = countFrom(previous, now, settings);
  const counted = failures.filter((f) => f.at > from);
  const total = counted.reduce((sum, f) => sum + Math.min(f.weight, settings.failures), 0);
  if (total < settings.failures) return undefined;
  const ended = previous === undefined ? undefined : (previous.releasedAt ?? previous.until);
  const strike =
    previous !== undefined && ended !== undefined && now - ended < settings.forgetAfterMs ? previous.strike + 1 : 1;
  const cooldown = Math.min(settings.maxCooldownMs, settings.cooldownMs * 2 ** (strike - 1));
  return {
    ...key,
    strike,
    since: now,
    until: now + cooldown,
    failures: total,
    codes: [...new Set(counted.map((f) => f.code))],
    hosts: [...new Set(counted.map((f) => f.host))],
    releasedAt: null,
    releasedBy: null,
  };
}

/** Checks a report before it reaches a table: known ids, a printable host name, failures of quarantine kinds. */
export function checkReport(report: FailureReport): FailureReport {
  const tenantId = checkTenantId(report.tenantId);
  const bundleHash = checkHash(report.bundleHash);
  const { host, failures } = report;
  if (typeof host !== "string" || host.length === 0 || host.length > 128 || /\p{Cc}/u.test(host))
    throw new StoreError("invalid_input", "Expected the host's name to be 1–128 printable characters.");
  if (!Array.isArray(failures) || failures.length === 0 || failures.length > 10_000)
    throw new StoreError("invalid_input", "Expected a report of 1–10000 failures.");
  for (const f of failures) {
    const ok = Number.isFinite(f.at) && QUARANTINE_CODES.has(f.code) && Number.isInteger(f.weight) && f.weight >= 1;
    if (!ok)
      throw new StoreError(
        "invalid_input",
        `Expected a failure {at, code of a quarantine kind, weight ≥ 1}, got ${JSON.stringify(f)}.`,
      );
  }
  return { tenantId, bundleHash, host, failures };
}

/** The error of a release whose bundle is not in quarantine. */
export function notQuarantined(tenantId: TenantId, version: number): StoreError {
  return new StoreError(
    "not_found",
    `The bundle of ${tenantId} v${version} is not in quarantine: nothing to release (see \`isohook quarantine list\`).`,
  );
}

/** The audit detail of a release. */
export function releaseDetail(entry: FleetQuarantine): string {
  return `quarantine lifted (strike ${entry.strike}, until ${new Date(entry.until).toISOString()})`;
}
