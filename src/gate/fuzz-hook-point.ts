import fc from "fast-check";
import { invokeHook } from "../dispatch/index.js";
import type {
  Failure,
  HookExecutor,
  HookPoint,
  JsonValue,
  Limits,
  SandboxBundle,
  TenantId,
} from "../protocol/index.js";
import { eventArbitrary } from "./event-arbitrary.js";

export interface FuzzPointOptions {
  readonly executor: HookExecutor;
  readonly bundle: SandboxBundle;
  readonly tenantId: TenantId;
  readonly point: HookPoint;
  readonly config: JsonValue;
  readonly limits: Limits;
  /** Strings worth trying (from the fixtures). */
  readonly dictionary: readonly string[];
  readonly runs: number;
  readonly timeMs: number;
  readonly seed: number;
  readonly signal?: AbortSignal;
}

export interface FuzzPointResult {
  readonly runs: number;
  readonly durationMs: number;
  /** The failure and the (shrunk) event that caused it; undefined when every call returned a valid result. */
  readonly failed?: { readonly failure: Failure; readonly event: JsonValue };
}

/**
 * Calls one exported hook point with generated valid events through the real sandbox and `invokeHook`
 * (the one parse point). Any failed outcome fails the fuzz: timeout, memory, crash, pending, a throw or a
 * result the point does not accept. Bounded by `runs` and by `timeMs` (shrinking included).
 */
export async function fuzzHookPoint(options: FuzzPointOptions): Promise<FuzzPointResult> {
  const { executor, bundle, tenantId, point, limits, signal } = options;
  const ctxJson = JSON.stringify({
    tenantId,
    runId: "deploy-gate-fuzz",
    turn: 0,
    hookId: `tenant:${tenantId}`,
    bundle: { version: 0, hash: bundle.hash },
    config: options.config,
    state: {},
  });
  let failed: FuzzPointResult["failed"];
  const started = performance.now();
  const property = fc.asyncProperty(eventArbitrary(point, options.dictionary), async (event) => {
    signal?.throwIfAborted();
    const eventJson = JSON.stringify(event);
    const call = { tenantId, point, eventJson, ctxJson, timeoutMs: limits.timeoutMs };
    const { outcome } = await invokeHook(executor, bundle, call, limits, signal);
    if (outcome.type === "decided") return true;
    failed = { failure: outcome.failure, event: JSON.parse(eventJson) as JsonValue };
    return false;
  });
  const details = await fc.check(property, {
    numRuns: options.runs,
    seed: options.seed,
    interruptAfterTimeLimit: options.timeMs,
    markInterruptAsFailure: false,
  });
  signal?.throwIfAborted();
  const durationMs = Math.round(performance.now() - started);
  if (!details.failed) return { runs: details.numRuns, durationMs };
  if (!failed) {
    // The property threw instead of returning false: the executor itself failed (closed or aborted).
    const message = details.errorInstance instanceof Error ? details.errorInstance.message : "the executor failed";
    failed = { failure: { code: "unavailable", message }, event: (details.counterexample?.[0] ?? null) as JsonValue };
  }
  return { runs: details.numRuns, durationMs, failed };
}
