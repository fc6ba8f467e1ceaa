import type {
  ActiveBundle,
  BundleHash,
  BundleRef,
  HookEvent,
  HookPoint,
  JsonObject,
  RunId,
  TenantId,
} from "../protocol/index.js";
import type { RunEnding, SpanRef, WorkerEventView } from "../telemetry/index.js";
import type { Dispatched } from "./decisions.js";
import type { PlatformHooks, PolicyMap } from "./registration.js";

/**
 * The dispatcher: process-wide (platform hooks, quarantine book); `openRun` gives the per-run scope the
 * agent loop calls at every hook point. Never throws for anything a hook does; a point's methods reject
 * only when their `signal` aborts (with the signal's reason).
 */
export interface Dispatcher {
  /**
   * Adds platform hooks to every run opened from now on (open runs keep the stack they started with).
   * Throws `DispatchError` (`invalid_platform_hooks`) for an unknown handler key, a non-function handler or
   * a duplicate id. Returns a function that removes them again.
   */
  registerPlatformHooks(hooks: PlatformHooks | readonly PlatformHooks[]): () => void;
  openRun(options: OpenRunOptions): RunDispatcher;
  /** When the (tenant, bundle) quarantine ends, if it is in one now. */
  quarantinedUntil(tenantId: TenantId, hash: BundleHash): number | undefined;
  /**
   * Resolves once every observe-only call queued so far (and any queued meanwhile) has ended and its
   * `hook.called` record was emitted. Runs never wait for their observers; a host that wants their records
   * (a CLI printing a run's trace, a test) waits here.
   */
  observersSettled(): Promise<void>;
  /**
   * Takes what the executor's supervisor reports (`createHookExecutor({ onEvent })`): a worker's death marks
   * the telemetry span of the call it failed (`isohook.worker.died`), a kill at its deadline included.
   */
  observeSandbox(event: WorkerEventView): void;
  /**
   * Cancels the observe-only calls not yet started (they leave no record), lets go of those running, and
   * resolves once all are accounted for; observers of runs dispatched afterwards do not run. Call it before
   * closing the executor. Decision calls are unaffected.
   */
  close(): Promise<void>;
}

export interface OpenRunOptions {
  readonly tenantId: TenantId;
  readonly runId: RunId;
  /**
   * The tenant's bundle as `BundleSource.active` serves it; undefined runs platform hooks only. With a
   * rollout in progress, the run's id picks the version that decides (`decidingBundle`); with a candidate
   * in shadow mode (other than the deciding version), it runs beside the tenant's hook on every call.
   */
  readonly bundle?: ActiveBundle | undefined;
  /** The failure policy the tenant asked for, per point; raised to `closed` where the platform floor says so. */
  readonly policy?: PolicyMap | undefined;
  /** Continues a run from its `snapshot()`: turn, budgets spent and each hook's state (by hook id). */
  readonly resume?: RunSnapshot | undefined;
}

/**
 * What a run scope holds that a paused run needs to go on elsewhere: `ctx.turn`, the hook time spent, and
 * each hook's `ctx.state` by hook id, a shadow candidate's included (a hook no longer in the stack is left
 * out when restored).
 */
export interface RunSnapshot {
  readonly turn: number;
  readonly spent: { readonly turnMs: number; readonly runMs: number };
  readonly states: Readonly<Record<string, JsonObject>>;
  /** The paused run's `invoke_agent` span, when traced: the resumed run's span links to it. */
  readonly trace?: SpanRef | undefined;
}

export interface DispatchOptions {
  readonly signal?: AbortSignal | undefined;
  /**
   * `tool.call` only: re-validates rewritten args against the tool's own schema and returns a message when
   * they do not fit. An invalid rewrite is the failure `invalid_result` of the hook that made it (its policy
   * applies).
   */
  readonly validateArgs?: ((args: JsonObject) => string | undefined) | undefined;
}

/**
 * One run's hook stack: platform `first` hooks, the tenant bundle, platform `last` hooks. Owns the run's
 * hook state (per hook), the turn number for `ctx.turn` and the turn and run hook-time budgets. Calls of one
 * run are serialised (parallel tool calls queue at the hooks) so each hook's state stays coherent.
 *
 * ```ts
 * const run = dispatcher.openRun({ tenantId, runId, bundle });
 * run.beginTurn(1);
 * const { decision, records } = await run.dispatch("tool.call", { call, batch: { index: 0, size: 1 } });
 * if (decision.type === "execute") await tool.execute(decision.args);
 * ```
 */
export interface RunDispatcher {
  readonly tenantId: TenantId;
  readonly runId: RunId;
  /** The tenant bundle that decides this run (the rollout's candidate or the active version); undefined without one. */
  readonly bundle?: BundleRef | undefined;
  /** The candidate running in shadow mode beside it, if any. */
  readonly shadow?: BundleRef | undefined;
  /** Sets `ctx.turn` and starts a fresh per-turn hook-time budget. */
  beginTurn(turn: number): void;
  /**
   * A delta of the model's streamed reply, for telemetry (a span event when `telemetry.streamEvents` is on);
   * the loop calls it for each one, hooks see them at `model.stream`.
   */
  streamed?(delta: { readonly kind: string; readonly delta: string; readonly callId?: string }): void;
  /** Sandbox time charged so far (ms). Platform hooks are trusted and not charged. */
  spent(): { readonly turnMs: number; readonly runMs: number };
  /** Resolves once this run's observe-only calls queued so far have ended (the run itself never waits). */
  observed(): Promise<void>;
  /** The run's turn, budgets spent and hook states, for `OpenRunOptions.resume` (a checkpoint). */
  snapshot(): RunSnapshot;
  /**
   * The run paused for approval (no `run.end` yet): its open spans end here with the stop reason, and
   * `snapshot()` then names the run span for the resumed run to link to.
   */
  pause(ending: RunEnding): void;
  /**
   * Runs the stack at `point` and combines the hooks' results by the point's row in `RULES`: the decision,
   * and the provenance record of every hook call that led to it. `run.end` also ends the run's trace.
   */
  dispatch<P extends HookPoint>(point: P, event: HookEvent<P>, options?: DispatchOptions): Promise<Dispatched<P>>;
}
