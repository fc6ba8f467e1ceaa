import type { BundleHash, FailureCode, HookId, HookPoint, RunId, StackFrame, TenantId } from "../protocol/index.js";
import type { BundleRef, FailurePolicy, HookSource } from "./registration.js";

/**
 * Runtime events of the dispatcher, all through the one `emit` of its options. One `hook.called` per hook
 * call (also failed, quarantined and budget-denied ones; never for points a bundle does not export), so
 * an operator can say which policy decided what, on which bundle version, in how long.
 */
export type DispatchEvent = HookCalledEvent | QuarantineEnteredEvent | QuarantineExitedEvent;

export interface HookCalledEvent {
  readonly type: "hook.called";
  /** Clock time (ms) when the call ended. */
  readonly at: number;
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly turn: number;
  readonly point: HookPoint;
  readonly hookId: HookId;
  readonly source: HookSource;
  /** The tenant bundle's version and hash; undefined for platform hooks. */
  readonly bundle: BundleRef | undefined;
  /** The result type the hook returned (`null` for the no-op), or its failure code and message. */
  readonly outcome:
    | { readonly type: "decided"; readonly result: string | null }
    | {
        readonly type: "failed";
        readonly code: FailureCode;
        readonly message: string;
        /** Set when the call only failed because another call crashed its worker (not counted by quarantine). */
        readonly bystander?: true;
        /** Where a `threw` failure was thrown, in the author's files (when the bundle came with its source map). */
        readonly stack?: readonly StackFrame[];
      };
  /** The registration's effective policy at this point (after the platform floor). */
  readonly policy: FailurePolicy;
  /** The call's own run time (for a tenant hook, in the sandbox): what hook time budgets charge. */
  readonly durationMs: number;
  /** For a tenant hook in process mode: time it waited in the sandbox without running, e.g. behind other tenants' calls on its worker. */
  readonly queuedMs?: number | undefined;
  /** For a tenant hook's cold call: time spent loading its bundle into a fresh isolate before the handler (not charged). */
  readonly loadMs?: number | undefined;
  readonly cpuMs: number;
  /** How many log lines the hook wrote. */
  readonly logs: number;
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
  /** The failure code that tipped it over. */
  readonly code: FailureCode;
}

export interface QuarantineExitedEvent {
  readonly type: "quarantine.exited";
  /** Clock time (ms) the quarantine ended (observed at the first call after it). */
  readonly at: number;
  readonly tenantId: TenantId;
  readonly bundleHash: BundleHash;
}

export type Emit = (event: DispatchEvent) => void;
