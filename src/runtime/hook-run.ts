import { randomUUID } from "node:crypto";
import { type AgentEvent, dispatchReported, type ModelDelta } from "../agent/index.js";
import type {
  DispatchEvent,
  Dispatched,
  DispatchOptions,
  PolicyMap,
  RunDispatcher,
  RunSnapshot,
} from "../dispatch/index.js";
import { type BundleRef, type HookEvent, type HookPoint, notify, RunId, TenantId } from "../protocol/index.js";
import { RuntimeError } from "./errors.js";
import type { RunEvent, RunWarning } from "./events.js";
import { checkRun, noBundleWarning } from "./run-options.js";
import type { SessionContext } from "./session.js";

/** What `runtime.openRun` takes: whose run it is, and where its events go. */
export interface OpenHookRunOptions {
  readonly tenantId: string;
  /** Default: a fresh `run_<uuid>`. */
  readonly runId?: string;
  /** The failure policy the tenant asked for, per point (the platform floor may raise it to `closed`). */
  readonly policy?: PolicyMap;
  /** Aborts the resolution of the tenant's bundle and every dispatch of the run. */
  readonly signal?: AbortSignal;
  /**
   * The run's events, in order: `run.started`, `run.warning`, `hooks.decided` per dispatch in which a hook
   * ran, one `hook.called` per hook call, `hook.shadowed`, and its bundle's quarantine changes.
   */
  readonly onEvent?: (event: RunEvent) => void;
}

/**
 * One tenant's run driven from outside isohook's agent loop (an MCP gateway, an AI SDK app, any framework
 * with hook callbacks): the same stacking, failure policy, quarantine, budgets, decision log, shadow,
 * rollout and telemetry as `runAgent`, one hook point at a time. Calls of one run are serialised.
 *
 * ```ts
 * const run = await runtime.openRun({ tenantId: "acme", onEvent: console.log });
 * run.beginTurn(1);
 * const { decision } = await run.dispatch("tool.call", { call, batch: { index: 0, size: 1 } });
 * if (decision.type === "execute") output = await callTool(call.name, decision.args);
 * await run.end({ stopReason: "completed", turns: 1, usage: { inputTokens: 0, outputTokens: 0 } });
 * ```
 */
export interface HookRun {
  readonly tenantId: TenantId;
  readonly runId: RunId;
  /** The version that decides this run (a rollout's candidate for runs in its share, else the active one). */
  readonly bundle: BundleRef | undefined;
  /** The candidate in shadow mode beside it, if any. */
  readonly shadow: BundleRef | undefined;
  /** What the platform should notice, e.g. `no_active_bundle`: the tenant's hooks do not guard this run. */
  readonly warnings: readonly RunWarning[];
  /** Sets `ctx.turn` (reported on `hooks.decided`) and starts a fresh per-turn hook-time budget. */
  beginTurn(turn: number): void;
  /**
   * Runs the stack at `point` and returns the combined decision with the record of every hook call; reports
   * `hooks.decided` when a hook ran. Never rejects for anything a hook does; rejects when the run's or the
   * call's signal aborts, and with `RuntimeError` (`closed`) once the run ended.
   */
  dispatch<P extends HookPoint>(point: P, event: HookEvent<P>, options?: DispatchOptions): Promise<Dispatched<P>>;
  /**
   * One delta of the model's streamed reply, as isohook's loop reports it: a `model.delta` run event, and a
   * span event when `telemetry.streamEvents` is on. (Hooks see deltas at `model.stream`, coalesced, through
   * `dispatch`.)
   */
  streamed(delta: ModelDelta): void;
  /** The turn, budgets spent and hook states (what a checkpoint of this run would hold). */
  snapshot(): RunSnapshot;
  /**
   * Dispatches `run.end` (observe-only) and ends the run: later dispatches are refused, and its events stop
   * once its observe-only calls have ended. A second call does nothing.
   */
  end(event: HookEvent<"run.end">): Promise<void>;
}

/** A run's dispatcher scope, opened for a tenant with its bundle, and announced (`run.started`, warnings). */
export interface StartedRun {
  readonly hooks: RunDispatcher;
  readonly warnings: readonly RunWarning[];
}

/**
 * Resolves the tenant's active bundle (the one it keeps for the whole run), opens the dispatcher's run on it
 * and reports `run.started` and any warnings: how every run begins, in isohook's loop or outside it.
 */
export async function startRun(
  context: Pick<SessionContext, "dispatcher" | "bundles">,
  run: { readonly tenantId: TenantId; readonly runId: RunId; readonly policy: PolicyMap | undefined },
  signal: AbortSignal | undefined,
  forward: (event: RunEvent) => void,
): Promise<StartedRun> {
  const { dispatcher, bundles } = context;
  const { tenantId, runId } = run;
  const bundle = await bundles?.active(tenantId, signal);
  const hooks = dispatcher.openRun({ tenantId, runId, bundle, policy: run.policy });
  const shadow = hooks.shadow === undefined ? {} : { shadow: hooks.shadow };
  forward({ type: "run.started", runId, tenantId, bundle: hooks.bundle, ...shadow });
  const warnings: RunWarning[] = [];
  if (bundle === undefined) warnings.push(noBundleWarning(tenantId, bundles !== undefined));
  for (const warning of warnings) forward({ type: "run.warning", runId, tenantId, ...warning });
  return { hooks, warnings };
}

/** The tenant id a run was opened for, checked: a wrong one is the caller's mistake, named. */
export function tenantOf(value: string): TenantId {
  const tenant = TenantId.safeParse(value);
  if (tenant.success) return tenant.data;
  throw new RuntimeError(
    "invalid_run",
    `Expected \`tenantId\` to be a tenant id (lowercase letters, digits, . _ -), got \`${String(value)}\``,
  );
}

/** `runtime.openRun`: a `HookRun` over the runtime's dispatcher, its events routed like a session's. */
export async function openHookRun(context: SessionContext, options: OpenHookRunOptions): Promise<HookRun> {
  const tenantId = tenantOf(options.tenantId);
  checkRun(options);
  const runId = RunId.parse(options.runId ?? `run_${randomUUID()}`);
  const { listeners } = context;
  const forward = (event: RunEvent) => notify(options.onEvent, event);
  const listen = (event: DispatchEvent) => {
    if (event.type === "hook.called" || event.type === "hook.shadowed" || event.tenantId === tenantId) forward(event);
  };
  listeners.set(runId, listen);
  let started: StartedRun;
  try {
    started = await startRun(context, { tenantId, runId, policy: options.policy }, options.signal, forward);
  } catch (error) {
    listeners.delete(runId);
    throw error;
  }
  const { hooks, warnings } = started;
  const report = { turn: 0, emit: forward as (event: AgentEvent) => void };
  let ended: Promise<void> | undefined;
  const withSignal = (given: DispatchOptions | undefined): DispatchOptions | undefined => {
    if (options.signal === undefined) return given;
    const signal = given?.signal === undefined ? options.signal : AbortSignal.any([options.signal, given.signal]);
    return { ...given, signal };
  };
  return {
    tenantId,
    runId,
    bundle: hooks.bundle,
    shadow: hooks.shadow,
    warnings,
    beginTurn(turn) {
      hooks.beginTurn(turn);
      report.turn = turn;
    },
    dispatch(point, event, dispatchOptions) {
      if (ended !== undefined)
        return Promise.reject(new RuntimeError("closed", `Run ${runId} has ended; open a new run with openRun()`));
      return dispatchReported(hooks, point, event, withSignal(dispatchOptions), report);
    },
    streamed(delta) {
      if (ended !== undefined) return;
      const callId = delta.callId === undefined ? {} : { callId: delta.callId };
      report.emit({ type: "model.delta", turn: report.turn, kind: delta.kind, delta: delta.delta, ...callId });
      hooks.streamed?.(delta);
    },
    snapshot: () => hooks.snapshot(),
    end(event) {
      ended ??= (async () => {
        try {
          // Observe-only and bounded by the hook timeouts: run.end is not cut short by the run's signal.
          await dispatchReported(hooks, "run.end", event, {}, report);
        } finally {
          void hooks.observed().then(() => listeners.delete(runId));
        }
      })();
      return ended;
    },
  };
}
