import type { BundleHash, FailureCode, HookEvent, HookPoint, RunId, TenantId } from "../protocol/index.js";
import type { HookRecord } from "./decisions.js";

/**
 * Runtime events of the dispatcher, all through the one `emit` of its options. One `hook.called` per hook
 * call (also failed, quarantined and budget-denied ones; never for points a bundle does not export), so
 * an operator can say which policy decided what, on which bundle version, in how long.
 */
export type DispatchEvent = HookCalledEvent | HookShadowedEvent | QuarantineEnteredEvent | QuarantineExitedEvent;

/** One hook call ended: its provenance record, the same object `hooks.decided` lists. */
export interface HookCalledEvent {
  readonly type: "hook.called";
  /** Clock time (ms) when the call ended. */
  readonly at: number;
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly turn: number;
  readonly record: HookRecord;
}

/**
 * A candidate in shadow mode was called after the tenant hook that decided (`record`, the record its
 * `hook.called` carried; absent where the deciding bundle does not export the point, so the run went on
 * with the no-op): `shadow` is the candidate's record, whose result was discarded.
 */
export interface HookShadowedEvent {
  readonly type: "hook.shadowed";
  /** Clock time (ms) when the shadow call ended. */
  readonly at: number;
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly turn: number;
  /** The event both calls saw (the object the stack serialised once for them). */
  readonly event: HookEvent<HookPoint>;
  readonly record?: HookRecord;
  readonly shadow: HookRecord;
}

export interface QuarantineEnteredEvent {
  readonly type: "quarantine.entered";
  readonly at: number;
  readonly tenantId: TenantId;
  readonly bundleHash: BundleHash;
  /** Clock time (ms) the quarantine ends. */
  readonly until: number;
  readonly cooldownMs: number;
  /** How many times this bundle entered quarantine, this one included (the cooldown doubles each time). */
  readonly strike: number;
  /** The failure code that tipped it over (for a fleet entry, the first of its codes). */
  readonly code: FailureCode;
  /** `host`: this host's own failures; `fleet`: the store's book, from the failures of every host. */
  readonly origin: "host" | "fleet";
  /** For a fleet entry: the hosts whose failures put it there. */
  readonly hosts?: readonly string[];
}

export interface QuarantineExitedEvent {
  readonly type: "quarantine.exited";
  /** Clock time (ms) the quarantine ended (observed at the first call after it). */
  readonly at: number;
  readonly tenantId: TenantId;
  readonly bundleHash: BundleHash;
  /** Set when an operator lifted it before its end (`isohook quarantine release`): who. */
  readonly releasedBy?: string;
}

export type Emit = (event: DispatchEvent) => void;
