import type { BundleHash, FailureCode, TenantId } from "../protocol/index.js";

/** What the quarantine book counts by: failures K within W, a cooldown doubling up to a maximum, forgotten after quiet. */
export interface QuarantineSettings {
  readonly failures: number;
  readonly windowMs: number;
  readonly cooldownMs: number;
  readonly maxCooldownMs: number;
  readonly forgetAfterMs: number;
}

/** A failure of the quarantine kinds one host saw: its clock time, code and weight (`strikeWeight`). */
export interface ReportedFailure {
  readonly at: number;
  readonly code: FailureCode;
  readonly weight: number;
}

/** One host's failures of one bundle since its last report. */
export interface FailureReport {
  readonly tenantId: TenantId;
  readonly bundleHash: BundleHash;
  /** The host that saw them (`createHookRuntime({ host })`, default the machine's hostname and pid). */
  readonly host: string;
  readonly failures: readonly ReportedFailure[];
}

/**
 * A bundle's quarantine as the fleet shares it: entered when the failures of every host within the window
 * reached the threshold; `strike` counts its entries (the cooldown doubles with each); `releasedAt` is set
 * when an operator lifted it before `until`. Times are milliseconds since the epoch.
 */
export interface FleetQuarantine {
  readonly tenantId: TenantId;
  readonly bundleHash: BundleHash;
  readonly strike: number;
  readonly since: number;
  readonly until: number;
  /** The failures (weights summed) that put it there, and their codes and hosts. */
  readonly failures: number;
  readonly codes: readonly FailureCode[];
  readonly hosts: readonly string[];
  readonly releasedAt: number | null;
  readonly releasedBy: string | null;
}

/**
 * Where the hosts of a fleet share quarantine: the store they share (`BundleStore.quarantine`). The
 * dispatcher reports failures off the hot path (batched, only when there are some) and follows every
 * entry and release through `watch`. A report decides, under the store's lock for that bundle, whether the
 * fleet's failures reached the threshold, so every host counts towards one book.
 */
export interface QuarantineLedger {
  /** Records the failures; resolves to the bundle's quarantine in force after them, if any. */
  report(
    report: FailureReport,
    settings: QuarantineSettings,
    signal?: AbortSignal,
  ): Promise<FleetQuarantine | undefined>;
  /**
   * Calls `listener` with each entry entered or released on the store from now on (by any host), and with
   * every entry in force when the feed (re)connects; returns the unsubscription.
   */
  watch(listener: (entry: FleetQuarantine) => void): () => void;
}
