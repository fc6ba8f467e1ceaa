import {
  type BundleRef,
  HOOK_POINT_NAMES,
  HOOK_POINTS,
  type HookEvent,
  HookId,
  type HookPoint,
  type HookResult,
  hookPointOfHandler,
  type JsonObject,
  JsonValue,
  type ResultIssue,
  type RunId,
  type TenantId,
} from "../protocol/index.js";
import { DispatchError } from "./errors.js";
import type { InvokedHook } from "./invoke-hook.js";
import { PolicyMapInput } from "./options.js";
import { effectivePolicy } from "./policy.js";
import type { FailurePolicy, PlatformHookContext, PlatformHooks } from "./registration.js";
import type { CallScope, StackedHook } from "./stacked-hook.js";

type AnyHandler = (event: unknown, ctx: PlatformHookContext) => unknown;

/** A validated platform registration, shared by every run that stacks it. */
export interface PlatformRegistration {
  readonly id: HookId;
  readonly position: "first" | "last";
  readonly handlers: ReadonlyMap<HookPoint, AnyHandler>;
  readonly policy: Readonly<Record<HookPoint, FailurePolicy>>;
  readonly config: JsonValue;
}

/** Checks a registration the way the bundler checks a bundle: unknown keys are listed with the valid names. */
export function validatePlatformHooks(input: PlatformHooks): PlatformRegistration {
  const problem = (message: string) => new DispatchError("invalid_platform_hooks", message);
  if (typeof input !== "object" || input === null) throw problem("Expected platform hooks to be an object");
  const id = HookId.safeParse(input.id);
  if (!id.success) {
    throw problem(
      `Expected the platform hook \`id\` to be 1–128 letters, digits or . _ : @ / -, got \`${String(input.id)}\``,
    );
  }
  if (input.position !== "first" && input.position !== "last") {
    throw problem(
      `Expected \`position\` of platform hook ${id.data} to be "first" or "last", got \`${String(input.position)}\``,
    );
  }
  if (typeof input.hooks !== "object" || input.hooks === null) {
    throw problem(`Expected \`hooks\` of platform hook ${id.data} to be an object of handlers`);
  }
  const handlers = new Map<HookPoint, AnyHandler>();
  for (const [key, value] of Object.entries(input.hooks)) {
    const point = hookPointOfHandler(key);
    if (point === undefined) {
      const valid = HOOK_POINT_NAMES.map((p) => HOOK_POINTS[p].handler).join(", ");
      throw problem(`Platform hook ${id.data} has an unknown handler \`${key}\`; valid handlers are ${valid}`);
    }
    if (value === undefined) continue;
    if (typeof value !== "function") throw problem(`Handler \`${key}\` of platform hook ${id.data} is not a function`);
    handlers.set(point, value as AnyHandler);
  }
  const policy = PolicyMapInput.safeParse(input.policy ?? {});
  if (!policy.success) {
    throw problem(`Expected \`policy\` of platform hook ${id.data} to map hook points to "closed" or "open"`);
  }
  const config = JsonValue.safeParse(input.config ?? null);
  if (!config.success) throw problem(`Expected \`config\` of platform hook ${id.data} to be JSON`);
  return {
    id: id.data,
    position: input.position,
    handlers,
    policy: effectivePolicy(policy.data, undefined),
    config: config.data,
  };
}

const NEVER_ABORTED = new AbortController().signal;

/**
 * A platform registration in one run's stack: trusted code called in-process with the same `(event, ctx)`
 * and result schemas as a tenant hook. Its state is a live object it mutates in place.
 */
export class PlatformHook implements StackedHook {
  readonly source = "platform";
  readonly bundle = undefined;
  readonly #registration: PlatformRegistration;
  readonly #tenantId: TenantId;
  readonly #runId: RunId;
  readonly #tenantBundle: BundleRef | undefined;
  readonly #state: JsonObject = {};

  constructor(
    registration: PlatformRegistration,
    tenantId: TenantId,
    runId: RunId,
    tenantBundle: BundleRef | undefined,
  ) {
    this.#registration = registration;
    this.#tenantId = tenantId;
    this.#runId = runId;
    this.#tenantBundle = tenantBundle;
  }

  get hookId(): HookId {
    return this.#registration.id;
  }

  get policy(): Readonly<Record<HookPoint, FailurePolicy>> {
    return this.#registration.policy;
  }

  exports(point: HookPoint): boolean {
    return this.#registration.handlers.has(point);
  }

  /** Platform handlers have no matchers: they are trusted code and check the tool themselves. */
  selects(): boolean {
    return true;
  }

  saveState(): JsonObject {
    return JSON.parse(JSON.stringify(this.#state)) as JsonObject;
  }

  restoreState(state: JsonObject): void {
    for (const key of Object.keys(this.#state)) delete this.#state[key];
    Object.assign(this.#state, state);
  }

  async call<P extends HookPoint>(
    point: P,
    event: HookEvent<P>,
    _eventJson: () => string,
    scope: CallScope,
  ): Promise<InvokedHook<P>> {
    const handler = this.#registration.handlers.get(point);
    if (handler === undefined)
      return { outcome: { type: "decided", result: null, state: undefined, logs: [] }, cost: NOT_RUN };
    const ctx: PlatformHookContext = {
      tenantId: this.#tenantId,
      runId: this.#runId,
      turn: scope.turn,
      hookId: this.#registration.id,
      bundle: this.#tenantBundle,
      config: this.#registration.config,
      state: this.#state,
      signal: scope.signal ?? NEVER_ABORTED,
    };
    const started = performance.now();
    let value: unknown;
    let thrown: { error: unknown } | undefined;
    try {
      value = await settle(handler(event, ctx), scope.signal);
    } catch (error) {
      scope.signal?.throwIfAborted();
      thrown = { error };
    }
    // Wall time stands in for CPU time: process.cpuUsage() costs ~1 µs a read and counts every thread of the host.
    const runMs = performance.now() - started;
    const cost = { cpuMs: runMs, runMs };
    if (thrown !== undefined) {
      const message = thrown.error instanceof Error ? thrown.error.message : String(thrown.error);
      return {
        outcome: { type: "failed", failure: { code: "threw", message: message.slice(0, 4_096) }, logs: [] },
        cost,
      };
    }
    if (value === undefined || value === null) {
      return { outcome: { type: "decided", result: null, state: undefined, logs: [] }, cost };
    }
    const parsed = HOOK_POINTS[point].result.safeParse(value);
    if (!parsed.success) {
      const issues: ResultIssue[] = parsed.error.issues.slice(0, 20).map((issue) => ({
        path: issue.path.map((k) => (typeof k === "symbol" ? String(k) : k)),
        message: issue.message,
      }));
      const failure = {
        code: "invalid_result" as const,
        message: `The hook returned a result that ${point} does not accept`,
        issues,
      };
      return { outcome: { type: "failed", failure, logs: [] }, cost };
    }
    // The cast only re-links the generic: `parsed` is the output of P's own schema.
    return { outcome: { type: "decided", result: parsed.data as HookResult<P>, state: undefined, logs: [] }, cost };
  }
}

/** Awaits a handler's value; rejects with the signal's reason when the run is aborted first. */
function settle(value: unknown, signal: AbortSignal | undefined): Promise<unknown> {
  if (signal === undefined || !(value instanceof Promise)) return Promise.resolve(value);
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    value.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

const NOT_RUN = { cpuMs: 0, runMs: 0 };
