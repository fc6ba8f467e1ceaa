import type {
  ActiveBundle,
  BundleRef,
  HookEvent,
  HookId as HookIdType,
  HookPoint,
  JsonObject,
  RunId,
  TenantId,
} from "../protocol/index.js";
import { HookId } from "../protocol/index.js";
import type { HookBudget } from "./budget.js";
import type { DecisionSink } from "./decision-sink.js";
import type { HookRecord } from "./decisions.js";
import type { InvokedHook } from "./invoke-hook.js";
import { type BundleHandlers, handlersOf } from "./matchers.js";
import type { FailurePolicy } from "./registration.js";
import type { CallScope, StackedHook } from "./stacked-hook.js";
import { type TenantCallDeps, TenantCaller } from "./tenant-call.js";

export interface TenantHookDeps extends TenantCallDeps {
  readonly budget: HookBudget;
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
 * The tenant's active bundle in one run's stack: its decision handlers, their policy and run-scoped state
 * (through its `TenantCaller`), and what it hands the decision log.
 */
export class TenantHook implements StackedHook {
  readonly hookId: HookIdType;
  readonly source = "tenant";
  readonly bundle: BundleRef;
  readonly policy: Readonly<Record<HookPoint, FailurePolicy>>;
  readonly shadow: TenantHook | undefined;
  readonly #tenantId: TenantId;
  readonly #runId: RunId;
  readonly #handlers: BundleHandlers;
  readonly #configJson: string;
  readonly #caller: TenantCaller;
  readonly #deps: TenantHookDeps;
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
    this.hookId = HookId.parse(`tenant:${active.tenantId}@v${active.version}`);
    this.bundle = { version: active.version, hash: active.manifest.hash };
    this.policy = policy;
    this.#handlers = handlersOf(active.manifest);
    this.#deps = deps;
    this.#configJson = JSON.stringify(active.config);
    const identity = { hookId: this.hookId, bundle: this.bundle, configJson: this.#configJson };
    this.#caller = new TenantCaller(runId, active, identity, deps, { what: "hook", inShadow: deps.inShadow });
  }

  exports(point: HookPoint): boolean {
    return this.#handlers.decides.has(point);
  }

  selects(point: HookPoint, name: string): boolean {
    return this.#handlers.selects(point, false, name);
  }

  saveState(): JsonObject {
    return JSON.parse(this.#caller.state.json) as JsonObject;
  }

  restoreState(state: JsonObject): void {
    const json = JSON.stringify(state);
    // The checkpoint is authenticated; the cap still holds, as for any state the hook returns.
    if (json.length > this.#deps.limits.maxStateChars) throw new RangeError("The restored state is over maxStateChars");
    this.#caller.state.json = json;
  }

  call<P extends HookPoint>(
    point: P,
    _event: HookEvent<P>,
    eventJson: () => string,
    scope: CallScope,
  ): Promise<InvokedHook<P>> {
    if (this.#deps.log !== undefined) {
      // A call that never runs (quarantine, budget) is recorded too, with the event and ctx it would have seen.
      this.#loggedEventJson = eventJson();
      this.#loggedStateJson = this.#caller.state.json;
    }
    const { turn, signal, telemetry } = scope;
    return this.#caller.call(point, eventJson(), { turn, signal, telemetry, budget: this.#deps.budget });
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
}
