import {
  type ActiveBundle,
  type BundleRef,
  HOOK_POINTS,
  type HookExecutor,
  HookId,
  type HookPoint,
  isToolPoint,
  type Limits,
  type RunId,
  type SandboxBundle,
  type SandboxCall,
  type TenantId,
  toolNameOf,
} from "../protocol/index.js";
import type { HookRecord } from "./decisions.js";
import type { Emit } from "./events.js";
import { HookState } from "./hook-state.js";
import { type InvokedHook, invokeHook } from "./invoke-hook.js";
import { type BundleHandlers, handlersOf } from "./matchers.js";
import type { ObserveCalls } from "./observe-calls.js";
import { type BundleKey, bundleKey, type QuarantineBook, strikeOf, strikeWeight } from "./quarantine.js";
import { hookRecord } from "./stack.js";
import type { SourceMapIndex, SourceMaps } from "./stack-map.js";
import { ctxPrefixOf, notRun } from "./tenant-hook.js";

export interface TenantObserverDeps {
  readonly executor: HookExecutor;
  readonly limits: Limits;
  readonly book: QuarantineBook;
  readonly clock: () => number;
  readonly sourceMaps: SourceMaps;
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
  readonly #key: BundleKey;
  readonly #sandboxBundle: SandboxBundle;
  readonly #sourceMap: SourceMapIndex | undefined;
  readonly #handlers: BundleHandlers;
  readonly #ctxPrefix: string;
  readonly #deps: TenantObserverDeps;
  readonly #state = new HookState();
  #tail: Promise<void> = Promise.resolve();

  constructor(runId: RunId, active: ActiveBundle, deps: TenantObserverDeps) {
    this.#tenantId = active.tenantId;
    this.#runId = runId;
    this.#key = bundleKey(active.tenantId, active.manifest.hash);
    this.hookId = HookId.parse(`tenant:${active.tenantId}@v${active.version}`);
    this.bundle = { version: active.version, hash: active.manifest.hash };
    this.#sandboxBundle = { hash: active.manifest.hash, code: active.code };
    this.#sourceMap =
      active.sourceMap === undefined ? undefined : deps.sourceMaps.of(active.manifest.hash, active.sourceMap);
    this.#handlers = handlersOf(active.manifest);
    this.#ctxPrefix = ctxPrefixOf(runId, active, this.hookId, this.bundle);
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
  observe(point: HookPoint, event: unknown, eventJson: string, turn: number): void {
    if (!this.#handlers.observes.has(point)) return;
    if (isToolPoint(point) && !this.#handlers.selects(point, true, toolNameOf(event as { call: { name: string } })))
      return;
    const call = this.#tail.then(() => this.#run(point, eventJson, turn));
    this.#tail = call;
    this.#deps.calls.track(call);
  }

  async #run(point: HookPoint, eventJson: string, turn: number): Promise<void> {
    const { calls } = this.#deps;
    if (calls.signal.aborted) return;
    try {
      const called = await this.#call(point, eventJson, turn);
      if (called === undefined) return;
      this.#record(point, called, turn);
    } catch {
      // Unreachable for anything the hook does (invokeHook never throws for it); an emit that throws is
      // guarded by the dispatcher. Nothing of an observer may reach the run.
    }
  }

  async #call(point: HookPoint, eventJson: string, turn: number): Promise<InvokedHook<HookPoint> | undefined> {
    const { executor, limits, book, clock, calls } = this.#deps;
    const quarantine = book.status(this.#key, clock());
    if (quarantine !== undefined) {
      const until = new Date(quarantine.until).toISOString();
      return notRun(
        "quarantined",
        `Bundle ${this.bundle.hash} of tenant ${this.#tenantId} is in quarantine until ${until} (strike ${quarantine.strike}); the observe hook was not called`,
      );
    }
    const call: SandboxCall & { point: HookPoint } = {
      tenantId: this.#tenantId,
      point,
      eventJson,
      ctxJson: `${this.#ctxPrefix}${turn},"state":${this.#state.json}}`,
      timeoutMs: limits.timeoutMs,
      priority: "observe",
    };
    let invoked: InvokedHook<HookPoint>;
    try {
      invoked = await invokeHook(executor, this.#sandboxBundle, call, limits, calls.signal);
    } catch {
      // Cancelled by close(), or the executor closed under it: nothing to record.
      return undefined;
    }
    const { outcome, cost } = invoked;
    const strike = strikeOf(outcome.type === "failed" ? outcome.failure : undefined, cost, limits.timeoutMs);
    if (strike !== undefined) book.strike(this.#key, strike, clock(), strikeWeight(cost, limits.timeoutMs));
    return this.#state.settle(invoked, this.#sourceMap, limits.maxStateChars);
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
