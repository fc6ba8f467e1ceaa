import {
  type ActiveBundle,
  type BundleHash,
  type BundleRef,
  notifier,
  type RunId,
  type TenantId,
} from "../protocol/index.js";
import { Telemetry, type WorkerEventView } from "../telemetry/index.js";
import type { Dispatcher, OpenRunOptions, RunDispatcher } from "./api.js";
import { HookBudget } from "./budget.js";
import type { DecisionSink } from "./decision-sink.js";
import { DispatchError } from "./errors.js";
import type { DispatchEvent } from "./events.js";
import { FleetQuarantineBook } from "./fleet-quarantine.js";
import { ObserveCalls } from "./observe-calls.js";
import {
  type DispatcherOptionsInput,
  PolicyMapInput,
  parseDispatcherOptions,
  type ResolvedDispatcherOptions,
} from "./options.js";
import { PlatformHook, type PlatformRegistration, validatePlatformHooks } from "./platform-hooks.js";
import { effectivePolicy } from "./policy.js";
import { bundleKey, LocalQuarantineBook, type QuarantineBook } from "./quarantine.js";
import type { PlatformHooks, PolicyMap } from "./registration.js";
import { decidingBundle } from "./rollout-pick.js";
import { openRunDispatcher } from "./run-dispatcher.js";
import { SourceMaps } from "./stack-map.js";
import type { StackedHook } from "./stacked-hook.js";
import { TenantHook } from "./tenant-hook.js";
import { TenantObserver } from "./tenant-observer.js";

/**
 * Creates the dispatcher the agent loop calls at every hook point. Options are validated (throws
 * `DispatchError` `invalid_options` naming each bad field); limits, budgets and quarantine default to
 * docs/architecture.md, "Limits". The dispatcher does not own the executor: close it yourself.
 *
 * ```ts
 * const dispatcher = createDispatcher({ executor, emit: (event) => log(event) });
 * const run = dispatcher.openRun({ tenantId, runId, bundle: await store.active(tenantId) });
 * run.beginTurn(0);
 * const { decision } = await run.toolCall({ call, batch: { index: 0, size: 1 } }, { signal });
 * ```
 */
export function createDispatcher(options: DispatcherOptionsInput): Dispatcher {
  return new HookDispatcher(parseDispatcherOptions(options));
}

class HookDispatcher implements Dispatcher {
  readonly #options: ResolvedDispatcherOptions;
  readonly #book: QuarantineBook;
  readonly #sourceMaps = new SourceMaps();
  readonly #observeCalls = new ObserveCalls();
  readonly #telemetry: Telemetry;
  #platform: readonly PlatformRegistration[] = [];

  constructor(options: ResolvedDispatcherOptions) {
    // A throwing `emit` must not undo a decision already taken: provenance is reported, never load-bearing.
    this.#options = { ...options, emit: options.emit === undefined ? undefined : notifier(options.emit) };
    this.#telemetry = new Telemetry(options.telemetry.maxTenants, options.telemetry.streamEvents);
    const { fleet, clock, quarantine: settings } = options;
    if (fleet === undefined) this.#book = new LocalQuarantineBook(settings, this.#options.emit);
    else {
      const outer = this.#options.emit;
      // A fleet entry reaches no call's span: it is counted here, by origin.
      const emit = (event: DispatchEvent) => {
        if (event.type === "quarantine.entered" && event.origin === "fleet") {
          const { code, strike, cooldownMs } = event;
          this.#telemetry.quarantined(event.tenantId, { code, strike, cooldownMs, origin: "fleet" });
        }
        outer?.(event);
      };
      this.#book = new FleetQuarantineBook({ settings, emit, ledger: fleet.ledger, host: fleet.host, clock });
    }
  }

  registerPlatformHooks(hooks: PlatformHooks | readonly PlatformHooks[]): () => void {
    const list: readonly PlatformHooks[] = isList(hooks) ? hooks : [hooks];
    const added = list.map(validatePlatformHooks);
    const ids = new Set(this.#platform.map((r) => r.id));
    for (const registration of added) {
      if (ids.has(registration.id)) {
        throw new DispatchError(
          "invalid_platform_hooks",
          `A platform hook with id ${registration.id} is registered already; give each registration its own id`,
        );
      }
      ids.add(registration.id);
    }
    this.#platform = [...this.#platform, ...added];
    return () => {
      this.#platform = this.#platform.filter((r) => !added.includes(r));
    };
  }

  openRun(options: OpenRunOptions): RunDispatcher {
    const { tenantId, runId } = options;
    const served = options.bundle;
    if (served !== undefined && served.tenantId !== tenantId) {
      throw new DispatchError(
        "invalid_options",
        `The bundle passed to openRun belongs to tenant ${served.tenantId}, not ${tenantId}; pass that tenant's active bundle`,
      );
    }
    const requested = PolicyMapInput.safeParse(options.policy ?? {});
    if (!requested.success) {
      throw new DispatchError("invalid_options", 'Expected `policy` to map hook points to "closed" or "open"');
    }
    const { executor, limits, budgets, emit, clock, decisionLog } = this.#options;
    const budget = new HookBudget(budgets.turnMs, budgets.runMs);
    const bundle = served === undefined ? undefined : decidingBundle(served, runId);
    const candidate = served?.shadow?.version === bundle?.version ? undefined : served?.shadow;
    const shadowBudget = candidate === undefined ? undefined : new HookBudget(budgets.turnMs, budgets.runMs);
    const tenantRef = refOf(bundle);
    const platform = (position: "first" | "last") =>
      this.#platform.filter((r) => r.position === position).map((r) => new PlatformHook(r, tenantId, runId, tenantRef));
    const hooks: StackedHook[] = [...platform("first")];
    let observer: TenantObserver | undefined;
    if (bundle !== undefined) {
      const policy = effectivePolicy(options.policy, this.#floorOf(tenantId));
      const sampled = decisionLog !== undefined && wantsRun(decisionLog, tenantId, runId);
      // Shadowed calls are recorded whenever the tenant's log is on, whatever its sampling.
      const shadowedOnly =
        !sampled && candidate !== undefined && decisionLog !== undefined && logsTenant(decisionLog, tenantId);
      const log = sampled || shadowedOnly ? decisionLog : undefined;
      const deps = {
        executor,
        limits,
        book: this.#book,
        budget,
        clock,
        sourceMaps: this.#sourceMaps,
        log,
        shadowedOnly,
      };
      // The shadow shares the quarantine book, keyed by its own bundle hash, and has a budget of its own; the
      // deciding hook hands its calls to the log with the shadow's record beside them.
      const shadow =
        candidate &&
        shadowBudget &&
        new TenantHook(runId, candidate, policy, {
          ...deps,
          budget: shadowBudget,
          log: undefined,
          shadowedOnly: false,
          inShadow: true,
        });
      hooks.push(new TenantHook(runId, bundle, policy, deps, shadow));
      if (bundle.manifest.observe !== undefined) {
        const { sourceMaps } = deps;
        const calls = this.#observeCalls;
        observer = new TenantObserver(runId, bundle, {
          executor,
          limits,
          book: this.#book,
          clock,
          sourceMaps,
          emit,
          calls,
        });
      }
    }
    hooks.push(...platform("last"));
    const budgetsOfRun = shadowBudget === undefined ? [budget] : [budget, shadowBudget];
    const telemetry = this.#telemetry.openRun({ tenantId, runId, bundle: tenantRef, resumes: options.resume?.trace });
    return openRunDispatcher(
      {
        tenantId,
        runId,
        hooks,
        observer,
        budget,
        budgets: budgetsOfRun,
        emit,
        clock,
        bundle: tenantRef,
        shadow: refOf(candidate),
        telemetry,
      },
      options.resume,
    );
  }

  observeSandbox(event: WorkerEventView): void {
    this.#telemetry.observeSandbox(event);
  }

  observersSettled(): Promise<void> {
    return this.#observeCalls.settled();
  }

  async close(): Promise<void> {
    await this.#observeCalls.close();
    if (this.#book instanceof FleetQuarantineBook) await this.#book.close();
  }

  quarantinedUntil(tenantId: TenantId, hash: BundleHash): number | undefined {
    return this.#book.status(bundleKey(tenantId, hash), this.#options.clock())?.until;
  }

  #floorOf(tenantId: TenantId): PolicyMap | undefined {
    const floor = this.#options.floor;
    if (typeof floor !== "function") return floor;
    const map = floor(tenantId);
    const parsed = PolicyMapInput.safeParse(map ?? {});
    if (!parsed.success) {
      throw new DispatchError(
        "invalid_options",
        `The \`floor\` function returned an invalid policy map for tenant ${tenantId}`,
      );
    }
    return parsed.data;
  }
}

function refOf(bundle: ActiveBundle | undefined): BundleRef | undefined {
  return bundle === undefined ? undefined : { version: bundle.version, hash: bundle.manifest.hash };
}

/** A sink that throws while deciding declines the run: the log is never load-bearing. */
function wantsRun(sink: DecisionSink, tenantId: TenantId, runId: RunId): boolean {
  try {
    return sink.sampled(tenantId, runId) === true;
  } catch {
    return false;
  }
}

/** Whether the tenant's log is on at all; a sink that cannot say (or throws) is asked per run only. */
function logsTenant(sink: DecisionSink, tenantId: TenantId): boolean {
  try {
    return sink.logs?.(tenantId) === true;
  } catch {
    return false;
  }
}

function isList(hooks: PlatformHooks | readonly PlatformHooks[]): hooks is readonly PlatformHooks[] {
  return Array.isArray(hooks);
}
