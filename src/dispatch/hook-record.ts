import type { HookOutcome, HookPoint } from "../protocol/index.js";
import type { HookRecord, RecordedOutcome } from "./decisions.js";
import type { InvokedHook } from "./invoke-hook.js";
import type { StackedHook } from "./stacked-hook.js";

/** The provenance record of one call of `hook` at `point`, built once (see `HookRecord`). */
export function hookRecord<P extends HookPoint>(
  hook: StackedHook,
  point: P,
  called: InvokedHook<P>,
  outcome: RecordedOutcome<P>,
): HookRecord<P> {
  const { cost } = called;
  return {
    point,
    hookId: hook.hookId,
    source: hook.source,
    bundle: hook.bundle,
    outcome,
    policy: hook.policy[point],
    cpuMs: cost.cpuMs,
    runMs: cost.runMs,
    queuedMs: cost.queuedMs,
    loadMs: cost.loadMs,
    loadAfterRecycle: cost.loadAfterRecycle,
    logs: called.outcome.logs,
  };
}

/** The outcome as the record keeps it: the hook's `state` stays with the hook, its logs go on the record. */
export function recorded<P extends HookPoint>(outcome: HookOutcome<P>): RecordedOutcome<P> {
  return outcome.type === "decided"
    ? { type: "decided", result: outcome.result }
    : { type: "failed", failure: outcome.failure };
}
