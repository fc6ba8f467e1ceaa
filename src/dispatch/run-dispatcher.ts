import type { BundleRef, HookEvent, HookPoint, RunId, TenantId } from "../protocol/index.js";
import type { RunEnding, RunTelemetry } from "../telemetry/index.js";
import type { DispatchOptions, RunDispatcher, RunSnapshot } from "./api.js";
import type { HookBudget } from "./budget.js";
import type { Dispatched } from "./decisions.js";
import type { Emit } from "./events.js";
import type { PointRule } from "./rule.js";
import { RULES } from "./rules.js";
import { runStack, type StackScope } from "./stack.js";
import type { StackedHook } from "./stacked-hook.js";
import type { TenantObserver } from "./tenant-observer.js";

export interface RunDispatcherDeps {
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly hooks: readonly StackedHook[];
  /** The tenant bundle's observe-only handlers, when it has any. */
  readonly observer: TenantObserver | undefined;
  /** The run's budget: what `spent` reports. */
  readonly budget: HookBudget;
  /** Every budget a turn starts afresh: the run's and its shadow's. */
  readonly budgets: readonly HookBudget[];
  readonly bundle: BundleRef | undefined;
  readonly shadow: BundleRef | undefined;
  readonly emit: Emit | undefined;
  readonly clock: () => number;
  readonly telemetry: RunTelemetry | undefined;
}

/**
 * Opens one run's hook stack with its lifecycle state: the turn for `ctx.turn`, the budgets, and a queue
 * that serialises the run's dispatches so each hook's state is handed from one call to the next.
 */
export function openRunDispatcher(deps: RunDispatcherDeps, resume?: RunSnapshot): RunDispatcher {
  return new StackRun(deps, resume);
}

class StackRun implements RunDispatcher {
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly bundle: BundleRef | undefined;
  readonly shadow: BundleRef | undefined;
  readonly #deps: RunDispatcherDeps;
  #turn = 0;
  #tail: Promise<void> = Promise.resolve();

  constructor(deps: RunDispatcherDeps, resume?: RunSnapshot) {
    this.tenantId = deps.tenantId;
    this.runId = deps.runId;
    this.bundle = deps.bundle;
    this.shadow = deps.shadow;
    this.#deps = deps;
    if (resume !== undefined) {
      this.#turn = resume.turn;
      deps.budget.restore(resume.spent);
      for (const hook of withShadows(deps.hooks)) {
        const state = resume.states[hook.hookId];
        if (state !== undefined) hook.restoreState(state);
      }
    }
  }

  snapshot(): RunSnapshot {
    const states: Record<string, ReturnType<StackedHook["saveState"]>> = {};
    for (const hook of withShadows(this.#deps.hooks)) states[hook.hookId] = hook.saveState();
    const trace = this.#deps.telemetry?.ref;
    return { turn: this.#turn, spent: this.#deps.budget.spent(), states, ...(trace ? { trace } : {}) };
  }

  pause(ending: RunEnding): void {
    this.#deps.telemetry?.end(ending);
  }

  beginTurn(turn: number): void {
    if (!Number.isInteger(turn) || turn < 0)
      throw new RangeError(`Expected \`turn\` to be an integer from 0 and up, got \`${turn}\``);
    this.#turn = turn;
    for (const budget of this.#deps.budgets) budget.beginTurn();
    this.#deps.telemetry?.beginTurn(turn);
  }

  streamed(delta: { readonly kind: string; readonly delta: string; readonly callId?: string }): void {
    this.#deps.telemetry?.streamed(delta.kind, delta.delta.length, delta.callId);
  }

  spent(): { readonly turnMs: number; readonly runMs: number } {
    return this.#deps.budget.spent();
  }

  observed(): Promise<void> {
    return this.#deps.observer?.observed() ?? Promise.resolve();
  }

  dispatch<P extends HookPoint>(point: P, event: HookEvent<P>, options?: DispatchOptions): Promise<Dispatched<P>> {
    const dispatched = this.#dispatch(RULES[point], event, options);
    const { telemetry } = this.#deps;
    if (point !== "run.end" || telemetry === undefined) return dispatched;
    const ended = () => telemetry.end(event as HookEvent<"run.end">);
    dispatched.then(ended, ended);
    return dispatched;
  }

  async #dispatch<P extends HookPoint>(
    rule: PointRule<P>,
    event: HookEvent<P>,
    options: DispatchOptions | undefined,
  ): Promise<Dispatched<P>> {
    const signal = options?.signal;
    signal?.throwIfAborted();
    const { hooks, tenantId, runId, emit, clock, observer, telemetry } = this.#deps;
    const observing = observer?.observesPoint(rule.point) === true;
    // Most points in most runs have no hook at all: answer without queueing.
    if (!hooks.some((hook) => hook.exports(rule.point) || hook.shadow?.exports(rule.point) === true)) {
      if (observing) observer?.queue(rule.point, event, JSON.stringify(event), this.#turn);
      return { decision: rule.decide(rule.start(event)), records: [] };
    }
    const previous = this.#tail;
    let release = () => {};
    this.#tail = new Promise<void>((resolve) => {
      release = resolve;
    });
    try {
      await untilDone(previous, signal);
      signal?.throwIfAborted();
      const turn = this.#turn;
      const scope = { tenantId, runId, turn, signal, emit, clock, telemetry, options };
      const dispatched =
        telemetry === undefined
          ? await runStack(rule, hooks, event, scope)
          : await tracedStack(rule, hooks, event, scope, telemetry);
      // After the decision, off the run's path: queued, never awaited (tenant-observer.ts).
      if (observing) observer?.queue(rule.point, event, JSON.stringify(event), turn);
      return dispatched;
    } finally {
      // Release only after the previous dispatch ended, so the queue order holds even when this one aborted early.
      void previous.then(release);
    }
  }
}

/** `runStack` inside the point's dispatch span. */
async function tracedStack<P extends HookPoint>(
  rule: PointRule<P>,
  hooks: readonly StackedHook[],
  event: HookEvent<P>,
  scope: StackScope,
  telemetry: RunTelemetry,
): Promise<Dispatched<P>> {
  telemetry.beginDispatch(rule.point);
  let decision: string | undefined;
  try {
    const dispatched = await runStack(rule, hooks, event, scope);
    decision = dispatched.decision.type;
    return dispatched;
  } finally {
    telemetry.endDispatch(decision);
  }
}

/** Waits for `promise`, or rejects with the signal's reason when it aborts first. */
function untilDone(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (signal === undefined) return promise;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    void promise.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

/**
 * The stack's hooks and the candidates in shadow mode beside them: a candidate's state is kept by its own
 * hook id (its version), so a resumed run's shadow goes on from where it was, and a different candidate
 * shadowing the resumed run starts afresh.
 */
function* withShadows(hooks: readonly StackedHook[]): Iterable<StackedHook> {
  for (const hook of hooks) {
    yield hook;
    if (hook.shadow !== undefined) yield hook.shadow;
  }
}
