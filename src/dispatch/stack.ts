import {
  type Failure,
  type HookEvent,
  type HookOutcome,
  type HookPoint,
  isToolPoint,
  type RunId,
  type TenantId,
  toolNameOf,
} from "../protocol/index.js";
import type { DecidedBy, Dispatched, HookRecord, RecordedOutcome } from "./decisions.js";
import type { Emit } from "./events.js";
import type { PointRule } from "./rule.js";
import type { CallScope, StackedHook } from "./stacked-hook.js";
import { NOT_RUN } from "./tenant-hook.js";

/** What `runStack` needs of its run besides the hooks. */
export interface StackScope extends CallScope {
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly emit: Emit | undefined;
  readonly clock: () => number;
}

/**
 * Calls the stack's hooks at one point in order and folds their results with the point's rule: the
 * policy turns failures into the safe decision or the no-op, a first-wins decision ends the point, and each
 * call is recorded and emitted. Hooks that do not export the point are skipped without a call or record; at
 * a tool point, a hook whose matcher does not select the tool is skipped with a record (`skipped`, `no
 * match`). The event's JSON is built at most once per distinct effective event.
 */
export async function runStack<P extends HookPoint, A>(
  rule: PointRule<P, A>,
  hooks: readonly StackedHook[],
  event: HookEvent<P>,
  scope: StackScope,
): Promise<Dispatched<P>> {
  const point = rule.point;
  let acc = rule.start(event);
  let json: string | undefined;
  let jsonOf: HookEvent<P> | undefined;
  const records: HookRecord<P>[] = [];
  const tool = isToolPoint(point) ? toolNameOf(event as HookEvent<typeof point>) : undefined;
  for (const hook of hooks) {
    if (!hook.exports(point)) continue;
    scope.signal?.throwIfAborted();
    if (tool !== undefined && !hook.selects(point, tool)) {
      const record = skippedRecord(hook, point);
      records.push(record);
      scope.emit?.({
        type: "hook.called",
        at: scope.clock(),
        tenantId: scope.tenantId,
        runId: scope.runId,
        turn: scope.turn,
        record,
      });
      continue;
    }
    const current = rule.event(acc);
    const eventJson = () => {
      if (jsonOf !== current || json === undefined) {
        json = JSON.stringify(current);
        jsonOf = current;
      }
      return json;
    };
    const called = await hook.call(point, current, eventJson, scope);
    let outcome: Exclude<RecordedOutcome<P>, { type: "skipped" }> = recorded(called.outcome);
    if (outcome.type === "decided" && outcome.result !== null) {
      const problem = rule.check(acc, outcome.result);
      if (problem !== undefined) outcome = { type: "failed", failure: { code: "invalid_result", message: problem } };
    }
    const policy = hook.policy[point];
    const { cost } = called;
    // Typed as built (never `skipped`), so telemetry can take it as it is.
    const record = {
      point,
      hookId: hook.hookId,
      source: hook.source,
      bundle: hook.bundle,
      outcome,
      policy,
      cpuMs: cost.cpuMs,
      runMs: cost.runMs,
      queuedMs: cost.queuedMs,
      loadMs: cost.loadMs,
      loadAfterRecycle: cost.loadAfterRecycle,
      logs: called.outcome.logs,
    } satisfies HookRecord<P>;
    records.push(record);
    hook.recorded?.(record, scope.turn);
    const { tenantId, runId, turn, emit } = scope;
    emit?.({ type: "hook.called", at: scope.clock(), tenantId, runId, turn, record });
    scope.telemetry?.hookCalled(record, cost === NOT_RUN);
    if (outcome.type === "decided") {
      if (outcome.result !== null) acc = rule.apply(acc, outcome.result, { hookId: hook.hookId, source: hook.source });
    } else if (policy === "closed") {
      acc = rule.safe(acc, outcome.failure, failedBy(hook, outcome.failure));
    }
    if (rule.done(acc)) break;
  }
  return { decision: rule.decide(acc), records };
}

const NO_MATCH = { type: "skipped", reason: "no match" } as const;

function skippedRecord<P extends HookPoint>(hook: StackedHook, point: P): HookRecord<P> {
  const { hookId, source, bundle } = hook;
  return { point, hookId, source, bundle, outcome: NO_MATCH, policy: hook.policy[point], cpuMs: 0, runMs: 0, logs: [] };
}

function failedBy(hook: StackedHook, failure: Failure): DecidedBy {
  return { hookId: hook.hookId, source: hook.source, failure: failure.code };
}

/** The outcome as the record keeps it: the hook's `state` stays with the hook, its logs go on the record. */
function recorded<P extends HookPoint>(outcome: HookOutcome<P>): Exclude<RecordedOutcome<P>, { type: "skipped" }> {
  return outcome.type === "decided"
    ? { type: "decided", result: outcome.result }
    : { type: "failed", failure: outcome.failure };
}
