import type { HookEvent, HookId, HookPoint } from "../protocol/index.js";
import type { RecordedOutcome } from "./decisions.js";
import type { BundleRef, FailurePolicy, HookSource } from "./registration.js";

/** What one hook call cost and ended in, before the stacking rule looks at it. */
export interface HookCallResult<P extends HookPoint> {
  readonly outcome: RecordedOutcome<P>;
  /** The hook's own run time; for a tenant hook, its time in the sandbox, never time queued there. */
  readonly durationMs: number;
  /** For a tenant hook: time it waited in the sandbox without running (other calls ahead on its worker). */
  readonly queuedMs?: number | undefined;
  /** For a tenant hook's cold call: time spent loading its bundle into a fresh isolate (not charged). */
  readonly loadMs?: number | undefined;
  readonly cpuMs: number;
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
