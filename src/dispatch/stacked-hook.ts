import type { BundleRef, HookEvent, HookId, HookPoint, SandboxCost } from "../protocol/index.js";
import type { RecordedOutcome } from "./decisions.js";
import type { FailurePolicy, HookSource } from "./registration.js";

/**
 * What one hook call ended in and cost, before the stacking rule looks at it. `cost` is the sandbox's own
 * record for a tenant hook (`SandboxCost`); a platform hook's wall time stands in for both run and CPU time.
 */
export interface HookCallResult<P extends HookPoint> {
  readonly outcome: RecordedOutcome<P>;
  readonly cost: SandboxCost;
  readonly logs: readonly string[];
}

/** What a call needs from its run. */
export interface CallScope {
  readonly turn: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * One source in a run's stack (a platform registration or the tenant bundle), with its run-scoped state.
 * `call` never rejects for anything the hook does; it rejects only on abort.
 */
export interface StackedHook {
  readonly hookId: HookId;
  readonly source: HookSource;
  readonly bundle: BundleRef | undefined;
  /** The effective failure policy at each point. */
  readonly policy: Readonly<Record<HookPoint, FailurePolicy>>;
  exports(point: HookPoint): boolean;
  /** `eventJson` serialises the event on first use and is shared by the hooks that see the same event. */
  call<P extends HookPoint>(
    point: P,
    event: HookEvent<P>,
    eventJson: () => string,
    scope: CallScope,
  ): Promise<HookCallResult<P>>;
}
