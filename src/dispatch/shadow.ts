import type { HookEvent, HookPoint } from "../protocol/index.js";
import type { HookRecord, RecordedOutcome } from "./decisions.js";
import { hookRecord, recorded } from "./hook-record.js";
import type { PointRule } from "./rule.js";
import type { StackScope } from "./stack.js";
import type { StackedHook } from "./stacked-hook.js";

/**
 * Calls a candidate in shadow mode after the hook that decides (`record` is that hook's call; undefined
 * where the deciding bundle does not export the point and only the candidate has a hook): the same
 * event and event JSON, the same checks of its result against what the stack had decided so far, and its
 * own budget, state and quarantine (the shadow is a `TenantHook` of its own). Its result is never folded
 * into the decision: it is recorded and emitted as `hook.shadowed` beside the deciding call's record.
 * Awaited before the stack goes on, so the run's calls and the shadow's keep their order on the worker;
 * its time is bounded by its own budget and never charged to the run's.
 */
export async function runShadow<P extends HookPoint, A>(
  shadow: StackedHook,
  rule: PointRule<P, A>,
  acc: A,
  event: HookEvent<P>,
  eventJson: () => string,
  record: HookRecord<P> | undefined,
  scope: StackScope,
): Promise<void> {
  const point = rule.point;
  if (!shadow.exports(point)) return;
  const called = await shadow.call(point, event, eventJson, scope);
  let outcome: RecordedOutcome<P> = recorded(called.outcome);
  if (outcome.type === "decided" && outcome.result !== null) {
    const problem = rule.check(acc, outcome.result);
    if (problem !== undefined) outcome = { type: "failed", failure: { code: "invalid_result", message: problem } };
  }
  const { tenantId, runId, turn, emit } = scope;
  const shadowed = hookRecord(shadow, point, called, outcome);
  const deciding = record === undefined ? {} : { record };
  emit?.({ type: "hook.shadowed", at: scope.clock(), tenantId, runId, turn, ...deciding, shadow: shadowed });
}
