import {
  type ActiveBundle,
  type BundleRef,
  type FailureCode,
  type HookEvent,
  type HookExecutor,
  HookId,
  type HookPoint,
  type JsonObject,
  type Limits,
  type RunId,
  type SandboxBundle,
  type SandboxCall,
  type SandboxCost,
  type TenantId,
} from "../protocol/index.js";
import { chargedMs, type HookBudget } from "./budget.js";
import type { DecisionSink } from "./decision-sink.js";
import type { HookRecord } from "./decisions.js";
import { HookState } from "./hook-state.js";
import { type InvokedHook, invokeHook } from "./invoke-hook.js";
import { type BundleHandlers, handlersOf } from "./matchers.js";
import { type BundleKey, bundleKey, type QuarantineBook, strikeOf, strikeWeight } from "./quarantine.js";
import type { FailurePolicy } from "./registration.js";
import type { SourceMapIndex, SourceMaps } from "./stack-map.js";
import type { CallScope, StackedHook } from "./stacked-hook.js";

export interface TenantHookDeps {
  readonly executor: HookExecutor;
  readonly limits: Limits;
  readonly book: QuarantineBook;
  readonly budget: HookBudget;
  readonly clock: () => number;
  /** Parsed source maps by bundle, shared by the dispatcher's runs. */
  readonly sourceMaps: SourceMaps;
  /** The decision log, when it wants this run (or only its shadowed calls). */
  readonly log: DecisionSink | undefined;
  /** Hand the log only the calls a shadow candidate ran beside (a run its sampling skipped). */
  readonly shadowedOnly: boolean;
  /**
   * This hook is a candidate in shadow mode: its quarantine key is its own even when its bundle's hash is
   * the active version's (a version that differs only in config), so its failures never strike the active.
   */
  readonly inShadow?: boolean;
}

/**
 * The tenant's active bundle in one run's stack. Owns the run-scoped `state` as the JSON it crosses as:
 * `ctx` is one precomputed prefix plus turn and state, so a call builds it with one concatenation.
 */
export class TenantHook implements StackedHook {
  readonly hookId: HookId;
  readonly source = "tenant";
  readonly bundle: BundleRef;
  readonly policy: Readonly<Record<HookPoint, FailurePolicy>>;
  readonly shadow: TenantHook | undefined;
  readonly #tenantId: TenantId;
  readonly #runId: RunId;
  readonly #key: BundleKey;
  readonly #sandboxBundle: SandboxBundle;
  readonly #sourceMap: SourceMapIndex | undefined;
  readonly #handlers: BundleHandlers;
  readonly #ctxPrefix: string;
  readonly #configJson: string;
  readonly #deps: TenantHookDeps;
  readonly #state = new HookState();
  /** The strings of the last call, kept by reference for the decision log (only when it wants this run). */
  #loggedEventJson = "";
  #loggedStateJson = "";

  constructor(
    runId: RunId,
    active: ActiveBundle,
    policy: Readonly<Record<HookPoint, FailurePolicy>>,
    deps: TenantHookDeps,
    shadow?: TenantHook,
  ) {
    this.shadow = shadow;
    this.#tenantId = active.tenantId;
    this.#runId = runId;
    const key = bundleKey(active.tenantId, active.manifest.hash);
    this.#key = deps.inShadow === true ? { ...key, id: `${key.id}\u0000shadow` } : key;
    this.hookId = HookId.parse(`tenant:${active.tenantId}@v${active.version}`);
    this.bundle = { version: active.version, hash: active.manifest.hash };
    this.policy = policy;
    this.#sandboxBundle = { hash: active.manifest.hash, code: active.code };
    this.#sourceMap =
      active.sourceMap === undefined ? undefined : deps.sourceMaps.of(active.manifest.hash, active.sourceMap);
    this.#handlers = handlersOf(active.manifest);
    this.#deps = deps;
    this.#configJson = JSON.stringify(active.config);
    this.#ctxPrefix = ctxPrefixOf(runId, active, this.hookId, this.bundle, this.#configJson);
  }

  exports(point: HookPoint): boolean {
    return this.#handlers.decides.has(point);
  }

  selects(point: HookPoint, name: string): boolean {
    return this.#handlers.selects(point, false, name);
  }

  saveState(): JsonObject {
    return JSON.parse(this.#state.json) as JsonObject;
  }

  restoreState(state: JsonObject): void {
    const json = JSON.stringify(state);
    // The checkpoint is authenticated; the cap still holds, as for any state the hook returns.
    if (json.length > this.#deps.limits.maxStateChars) throw new RangeError("The restored state is over maxStateChars");
    this.#state.json = json;
  }

  async call<P extends HookPoint>(
    point: P,
    _event: HookEvent<P>,
    eventJson: () => string,
    scope: CallScope,
  ): Promise<InvokedHook<P>> {
    const { executor, limits, book, budget, clock, log } = this.#deps;
    if (log !== undefined) {
      // A call that never runs (quarantine, budget) is recorded too, with the event and ctx it would have seen.
      this.#loggedEventJson = eventJson();
      this.#loggedStateJson = this.#state.json;
    }
    const hash = this.bundle.hash;
    const quarantine = book.status(this.#key, clock());
    if (quarantine !== undefined) {
      const until = new Date(quarantine.until).toISOString();
      return notRun(
        "quarantined",
        `Bundle ${hash} of tenant ${this.#tenantId} is in quarantine until ${until} (strike ${quarantine.strike}) after repeated sandbox failures; the hook was not called`,
      );
    }
    const denial = budget.denial();
    if (denial !== undefined) return notRun("timeout", denial);

    const timeoutMs = budget.timeoutFor(limits.timeoutMs) ?? limits.timeoutMs;
    const call: SandboxCall & { point: P } = {
      tenantId: this.#tenantId,
      point,
      eventJson: eventJson(),
      ctxJson: this.#ctxJson(scope.turn),
      timeoutMs,
    };
    let invoked: InvokedHook<P>;
    try {
      invoked = await invokeHook(executor, this.#sandboxBundle, call, limits, scope.signal);
    } catch (error) {
      // The executor rejects only on abort or once closed: the latter is a failure like any other.
      scope.signal?.throwIfAborted();
      const reason = error instanceof Error ? error.message : String(error);
      return notRun("unavailable", `The sandbox did not take the call: ${reason}`);
    }
    const { outcome, cost } = invoked;
    budget.charge(chargedMs(cost));
    const strike = strikeOf(outcome.type === "failed" ? outcome.failure : undefined, cost, limits.timeoutMs);
    if (strike !== undefined) {
      const now = clock();
      const entered = book.strike(this.#key, strike, now, strikeWeight(cost, limits.timeoutMs));
      if (entered !== undefined)
        scope.telemetry?.quarantined({
          code: strike,
          strike: entered.strike,
          cooldownMs: entered.until - now,
          origin: "host",
        });
    }
    return this.#state.settle(invoked, this.#sourceMap, limits.maxStateChars);
  }

  recorded(record: HookRecord, turn: number, shadow?: HookRecord): void {
    const { log, clock, shadowedOnly } = this.#deps;
    if (log === undefined || (shadowedOnly && shadow === undefined)) return;
    try {
      log.record({
        at: clock(),
        tenantId: this.#tenantId,
        runId: this.#runId,
        turn,
        point: record.point,
        eventJson: this.#loggedEventJson,
        configJson: this.#configJson,
        stateJson: this.#loggedStateJson,
        record,
        shadow,
      });
    } catch {
      // The log is never load-bearing: a sink that throws loses its entry, not the decision.
    }
  }

  #ctxJson(turn: number): string {
    return `${this.#ctxPrefix}${turn},"state":${this.#state.json}}`;
  }
}

/** The JSON text of a tenant hook's `ctx` up to its turn: the rest is `${turn},"state":${state}}`. */
export function ctxPrefixOf(
  runId: RunId,
  active: ActiveBundle,
  hookId: HookId,
  bundle: BundleRef,
  configJson = JSON.stringify(active.config),
): string {
  return (
    `{"tenantId":${JSON.stringify(active.tenantId)},"runId":${JSON.stringify(runId)},` +
    `"hookId":${JSON.stringify(hookId)},"bundle":${JSON.stringify(bundle)},` +
    `"config":${configJson},"turn":`
  );
}

/** The cost of a call refused before its executor saw it (quarantine, budget, no sandbox): one shared object. */
export const NOT_RUN: SandboxCost = { cpuMs: 0, runMs: 0 };

export function notRun<P extends HookPoint>(code: FailureCode, message: string): InvokedHook<P> {
  return { outcome: { type: "failed", failure: { code, message }, logs: [] }, cost: NOT_RUN };
}
