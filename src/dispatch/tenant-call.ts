import type {
  ActiveBundle,
  BundleRef,
  FailureCode,
  HookExecutor,
  HookId,
  HookPoint,
  Limits,
  RunId,
  SandboxBundle,
  SandboxCall,
  SandboxCost,
  TenantId,
} from "../protocol/index.js";
import type { RunTelemetry } from "../telemetry/index.js";
import { chargedMs, type HookBudget } from "./budget.js";
import { HookState } from "./hook-state.js";
import { type InvokedHook, invokeHook } from "./invoke-hook.js";
import { type BundleKey, bundleKey, type QuarantineBook, strikeOf, strikeWeight } from "./quarantine.js";
import type { SourceMaps } from "./stack-map.js";
import { type CallEnd, endOf, type Turn } from "./suspect-gate.js";

export interface TenantCallDeps {
  readonly executor: HookExecutor;
  readonly limits: Limits;
  readonly book: QuarantineBook;
  readonly clock: () => number;
  /** Parsed source maps by bundle, shared by the dispatcher's runs. */
  readonly sourceMaps: SourceMaps;
}

/** What one call adds to its bundle's: its run's turn and signal, and what it is charged to. */
export interface TenantCallScope {
  readonly turn: number;
  readonly signal: AbortSignal | undefined;
  /** The run's hook-time budget: refuses a call once spent and shortens its timeout to what is left. */
  readonly budget?: HookBudget | undefined;
  /** `observe` runs behind every decision call waiting for the same worker. */
  readonly priority?: "observe" | undefined;
  readonly telemetry?: RunTelemetry | undefined;
}

/**
 * A tenant bundle's one way into the sandbox within a run, for its deciding hook and for its observers
 * alike: the quarantine check, the budget, the call with `ctx` built by one concatenation, the strikes its
 * failures take, and the run-scoped `ctx.state` the call hands on (each caller keeps its own). Never
 * rejects for anything the hook does; rejects only when `signal` aborts.
 */
export class TenantCaller {
  readonly state = new HookState();
  readonly #tenantId: TenantId;
  readonly #key: BundleKey;
  readonly #sandboxBundle: SandboxBundle;
  readonly #sourceMap;
  readonly #ctxPrefix: string;
  readonly #deps: TenantCallDeps;
  /** How a refusal names what was not called ("hook", "observe hook"). */
  readonly #what: string;

  constructor(
    runId: RunId,
    active: ActiveBundle,
    identity: { readonly hookId: HookId; readonly bundle: BundleRef; readonly configJson: string },
    deps: TenantCallDeps,
    options: { readonly what: string; readonly inShadow?: boolean | undefined },
  ) {
    this.#tenantId = active.tenantId;
    const key = bundleKey(active.tenantId, active.manifest.hash);
    // A candidate in shadow mode has a key of its own even when its hash is the active version's (a version
    // that differs only in config), so its failures never strike the active.
    this.#key = options.inShadow === true ? { ...key, id: `${key.id}\u0000shadow` } : key;
    this.#sandboxBundle = { hash: active.manifest.hash, code: active.code };
    this.#sourceMap =
      active.sourceMap === undefined ? undefined : deps.sourceMaps.of(active.manifest.hash, active.sourceMap);
    this.#ctxPrefix = ctxPrefixOf(runId, active.tenantId, identity);
    this.#deps = deps;
    this.#what = options.what;
  }

  call<P extends HookPoint>(point: P, eventJson: string, scope: TenantCallScope): Promise<InvokedHook<P>> {
    // A suspect bundle's calls take turns on this host (quarantine.ts, `admit`); a trusted one's start at once.
    const waiting = this.#deps.book.admit(this.#key, scope.signal);
    if (waiting === undefined) return this.#call(point, eventJson, scope, undefined);
    return this.#inTurn(waiting, point, eventJson, scope);
  }

  async #inTurn<P extends HookPoint>(
    waiting: Promise<Turn>,
    point: P,
    eventJson: string,
    scope: TenantCallScope,
  ): Promise<InvokedHook<P>> {
    const turn = await waiting;
    const ended = { as: "none" as CallEnd };
    try {
      return await this.#call(point, eventJson, scope, ended);
    } finally {
      turn(ended.as);
    }
  }

  async #call<P extends HookPoint>(
    point: P,
    eventJson: string,
    scope: TenantCallScope,
    ended: { as: CallEnd } | undefined,
  ): Promise<InvokedHook<P>> {
    const { executor, limits, book, clock } = this.#deps;
    const quarantine = book.status(this.#key, clock());
    if (quarantine !== undefined) {
      const until = new Date(quarantine.until).toISOString();
      return notRun(
        "quarantined",
        `Bundle ${this.#sandboxBundle.hash} of tenant ${this.#tenantId} is in quarantine until ${until} (strike ${quarantine.strike}) after repeated sandbox failures; the ${this.#what} was not called`,
      );
    }
    const { budget } = scope;
    const denial = budget?.denial();
    if (denial !== undefined) return notRun("timeout", denial);

    const call: SandboxCall & { point: P } = {
      tenantId: this.#tenantId,
      point,
      eventJson,
      ctxJson: `${this.#ctxPrefix}${scope.turn},"state":${this.state.json}}`,
      timeoutMs: budget?.timeoutFor(limits.timeoutMs) ?? limits.timeoutMs,
      ...(scope.priority === undefined ? {} : { priority: scope.priority }),
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
    budget?.charge(chargedMs(cost));
    const strike = strikeOf(outcome.type === "failed" ? outcome.failure : undefined, cost, limits.timeoutMs);
    if (ended !== undefined) ended.as = endOf(outcome, strike);
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
    return this.state.settle(invoked, this.#sourceMap, limits.maxStateChars);
  }
}

/** The JSON text of a tenant hook's `ctx` up to its turn: the rest is `${turn},"state":${state}}`. */
function ctxPrefixOf(
  runId: RunId,
  tenantId: TenantId,
  identity: { readonly hookId: HookId; readonly bundle: BundleRef; readonly configJson: string },
): string {
  return (
    `{"tenantId":${JSON.stringify(tenantId)},"runId":${JSON.stringify(runId)},` +
    `"hookId":${JSON.stringify(identity.hookId)},"bundle":${JSON.stringify(identity.bundle)},` +
    `"config":${identity.configJson},"turn":`
  );
}

/** The cost of a call refused before its executor saw it (quarantine, budget, no sandbox): one shared object. */
export const NOT_RUN: SandboxCost = { cpuMs: 0, runMs: 0 };

export function notRun<P extends HookPoint>(code: FailureCode, message: string): InvokedHook<P> {
  return { outcome: { type: "failed", failure: { code, message }, logs: [] }, cost: NOT_RUN };
}
