import type { BundleRef, HookEvent, HookId, HookPoint, JsonObject } from "../protocol/index.js";
import type { RunTelemetry } from "../telemetry/index.js";
import type { HookRecord } from "./decisions.js";
import type { InvokedHook } from "./invoke-hook.js";
import type { FailurePolicy, HookSource } from "./registration.js";

/** What a call needs from its run. */
export interface CallScope {
  readonly turn: number;
  readonly signal: AbortSignal | undefined;
  /** The run's spans and metrics; undefined when no OpenTelemetry SDK is registered. */
  readonly telemetry?: RunTelemetry | undefined;
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
  /**
   * A candidate in shadow mode beside this hook (the tenant's only): called after it with the same event,
   * on its own budget, state and quarantine; its result never reaches the run.
   */
  readonly shadow?: StackedHook | undefined;
  exports(point: HookPoint): boolean;
  /** At a tool point: whether the hook's handler is called for the tool `name` (its matcher selects it). */
  selects(point: HookPoint, name: string): boolean;
  /** The hook's run-scoped `ctx.state` now, as JSON (for a checkpoint). */
  saveState(): JsonObject;
  /** Puts back a state `saveState` returned (a resumed run). */
  restoreState(state: JsonObject): void;
  /** `eventJson` serialises the event on first use and is shared by the hooks that see the same event. */
  call<P extends HookPoint>(
    point: P,
    event: HookEvent<P>,
    eventJson: () => string,
    scope: CallScope,
  ): Promise<InvokedHook<P>>;
  /**
   * Told the record of its last call once the stack has built it, with its shadow candidate's record of the
   * same event when one ran (the tenant hook hands both to the decision log).
   */
  recorded?(record: HookRecord, turn: number, shadow?: HookRecord): void;
}
