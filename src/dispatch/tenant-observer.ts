import {
  type ActiveBundle,
  type BundleRef,
  HOOK_POINTS,
  HookId,
  type HookPoint,
  isToolPoint,
  type RunId,
  type TenantId,
  toolNameOf,
} from "../protocol/index.js";
import type { HookRecord } from "./decisions.js";
import type { Emit } from "./events.js";
import type { InvokedHook } from "./invoke-hook.js";
import { type BundleHandlers, handlersOf } from "./matchers.js";
import type { ObserveCalls } from "./observe-calls.js";
import { hookRecord } from "./stack.js";
import { type TenantCallDeps, TenantCaller } from "./tenant-call.js";

export interface TenantObserverDeps extends TenantCallDeps {
  readonly emit: Emit | undefined;
  readonly calls: ObserveCalls;
}

/**
 * The observe-only handlers of a tenant's bundle in one run (`defineHooks({ observe: { … } })`). `observe`
 * queues a call and returns at once: the run never waits for it. The run's observe calls run one after
 * another, in the order queued, each with the state the previous one left: observers have their own
 * run-scoped `ctx.state`, apart from the decision handlers' (which they neither see nor change), so a
 * decision never depends on when an observer ran. Each call is sent with priority `observe` (the executor
 * runs it behind every decision call waiting for the same worker), under the full per-call timeout; it is
 * never charged to the run's budgets, but its failures take quarantine strikes like any other call's and a
 * quarantined bundle's observers do not run. Each call's record is emitted as `hook.called` with
 * `observe: true`; the handler's result is discarded (the record's outcome is the no-op or the failure).
 */
export class TenantObserver {
  readonly hookId: HookId;
  readonly source = "tenant";
  readonly bundle: BundleRef;
  /** An observer's failure never decides anything: its records say `open`. */
  readonly policy = OBSERVED_POLICY;
  readonly #tenantId: TenantId;
  readonly #runId: RunId;
  readonly #handlers: BundleHandlers;
  readonly #caller: TenantCaller;
  readonly #deps: TenantObserverDeps;
  #tail: Promise<void> = Promise.resolve();

  constructor(runId: RunId, active: ActiveBundle, deps: TenantObserverDeps) {
    this.#tenantId = active.tenantId;
    this.#runId = runId;
    this.hookId = HookId.parse(`tenant:${active.tenantId}@v${active.version}`);
    this.bundle = { version: active.version, hash: active.manifest.hash };
    this.#handlers = handlersOf(active.manifest);
    const identity = { hookId: this.hookId, bundle: this.bundle, configJson: JSON.stringify(active.config) };
    this.#caller = new TenantCaller(runId, active, identity, deps, { what: "observe hook" });
    this.#deps = deps;
  }

  /** Resolves once the observe calls queued so far have ended (never rejects). */
  observed(): Promise<void> {
    return this.#tail;
  }

  /** Whether the bundle has an observe handler at `point` at all (a cheap check before building anything). */
  observesPoint(point: HookPoint): boolean {
    return this.#handlers.observes.has(point);
  }

  /**
   * Queues the observe call of `point` for `event` if a handler selects it (at a tool point, its matcher must
   * select the tool: a call no observe matcher selects leaves no record). Returns at once; never throws.
   */
  queue(point: HookPoint, event: unknown, eventJson: string, turn: number): void {
    if (!this.#handlers.observes.has(point)) return;
    if (isToolPoint(point) && !this.#handlers.selects(point, true, toolNameOf(event as { call: { name: string } })))
      return;
    const call = this.#tail.then(() => this.#run(point, eventJson, turn));
    this.#tail = call;
    this.#deps.calls.track(call);
  }

  async #run(point: HookPoint, eventJson: string, turn: number): Promise<void> {
    const { signal } = this.#deps.calls;
    if (signal.aborted) return;
    try {
      const called = await this.#caller.call(point, eventJson, { turn, signal, priority: "observe" });
      this.#record(point, called, turn);
    } catch {
      // Cancelled by close() (nothing to record), or an emit that throws (guarded by the dispatcher). Nothing
      // of an observer may reach the run.
    }
  }

  #record(point: HookPoint, called: InvokedHook<HookPoint>, turn: number): void {
    const { outcome } = called;
    const recorded = outcome.type === "failed" ? ({ type: "failed", failure: outcome.failure } as const) : NOOP;
    const record: HookRecord = { ...hookRecord(this, point, called, recorded), observe: true };
    const { emit, clock } = this.#deps;
    emit?.({ type: "hook.called", at: clock(), tenantId: this.#tenantId, runId: this.#runId, turn, record });
  }
}

const NOOP = { type: "decided", result: null } as const;
const OBSERVED_POLICY = Object.fromEntries(Object.keys(HOOK_POINTS).map((point) => [point, "open"])) as Readonly<
  Record<HookPoint, "open">
>;
