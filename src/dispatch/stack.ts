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
import type { DispatchOptions } from "./api.js";
import type { DecidedBy, Dispatched, HookRecord, RecordedOutcome } from "./decisions.js";
import type { Emit } from "./events.js";
import type { InvokedHook } from "./invoke-hook.js";
import type { PointRule } from "./rule.js";
import type { CallScope, StackedHook } from "./stacked-hook.js";
import { NOT_RUN } from "./tenant-call.js";

/** What `runStack` needs of its run besides the hooks. */
export interface StackScope extends CallScope {
  /** The dispatch's options, for the rule's checks. */
  readonly options: DispatchOptions | undefined;
  readonly tenantId: TenantId;
  readonly runId: RunId;
  readonly emit: Emit | undefined;
  readonly clock: () => number;
}

/**
 * Calls the stack's hooks at one point in order and folds their results with the point's rule: the
 * policy turns failures into the safe decision or the no-op, a first-wins decision ends the point, and each
 * call is recorded and emitted. Hooks that do not export the point are skipped without a call or record (but
 * for a candidate in shadow mode that does); at a tool point, a hook whose matcher does not select the tool
 * is skipped with a record (`skipped`, `no match`). The event's JSON is built at most once per distinct
 * effective event.
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
    const exported = hook.exports(point);
    if (!exported && hook.shadow?.exports(point) !== true) continue;
    scope.signal?.throwIfAborted();
    const current = rule.event(acc);
    const eventJson = () => {
      if (jsonOf !== current || json === undefined) {
        json = JSON.stringify(current);
        jsonOf = current;
      }
      return json;
    };
    const selected = tool === undefined || hook.selects(point, tool);
    if (!exported || !selected) {
      if (exported) {
        const record = skippedRecord(hook, point);
        records.push(record);
        const { tenantId, runId, turn, emit } = scope;
        emit?.({ type: "hook.called", at: scope.clock(), tenantId, runId, turn, record });
      }
      // Only the candidate in shadow mode may call here: it sees the event, the run goes on without it.
      if (hook.shadow) await runShadow(hook.shadow, rule, acc, current, eventJson, undefined, scope, tool);
      continue;
    }
    const called = await hook.call(point, current, eventJson, scope);
    let outcome = recorded(called.outcome);
    if (outcome.type === "decided" && outcome.result !== null) {
      const problem = rule.check(acc, outcome.result, scope.options);
      if (problem !== undefined) outcome = { type: "failed", failure: { code: "invalid_result", message: problem } };
    }
    const policy = hook.policy[point];
    const record = hookRecord(hook, point, called, outcome);
    records.push(record);
    const { tenantId, runId, turn, emit } = scope;
    emit?.({ type: "hook.called", at: scope.clock(), tenantId, runId, turn, record });
    scope.telemetry?.hookCalled(record, called.cost === NOT_RUN);
    // A candidate in shadow mode sees what this hook saw; its result is recorded and discarded.
    const shadowed =
      hook.shadow === undefined
        ? undefined
        : await runShadow(hook.shadow, rule, acc, current, eventJson, record, scope, tool);
    hook.recorded?.(record, turn, shadowed);
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
  tool: string | undefined,
): Promise<HookRecord<P> | undefined> {
  const point = rule.point;
  if (!shadow.exports(point) || (tool !== undefined && !shadow.selects(point, tool))) return undefined;
  const called = await shadow.call(point, event, eventJson, scope);
  let outcome = recorded(called.outcome);
  if (outcome.type === "decided" && outcome.result !== null) {
    const problem = rule.check(acc, outcome.result, scope.options);
    if (problem !== undefined) outcome = { type: "failed", failure: { code: "invalid_result", message: problem } };
  }
  const { tenantId, runId, turn, emit } = scope;
  const shadowed = hookRecord(shadow, point, called, outcome);
  const deciding = record === undefined ? {} : { record };
  emit?.({ type: "hook.shadowed", at: scope.clock(), tenantId, runId, turn, event, ...deciding, shadow: shadowed });
  return shadowed;
}

/** The provenance record of one call of `hook` at `point`, built once (see `HookRecord`); never `skipped`. */
export function hookRecord<P extends HookPoint>(
  hook: Pick<StackedHook, "hookId" | "source" | "bundle" | "policy">,
  point: P,
  called: InvokedHook<P>,
  outcome: CalledOutcome<P>,
): HookRecord<P> & { readonly outcome: CalledOutcome<P> } {
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
    evicted: cost.evicted,
    logs: called.outcome.logs,
  };
}

/** The outcome of a hook that was called (not skipped by its matcher). */
type CalledOutcome<P extends HookPoint> = Exclude<RecordedOutcome<P>, { type: "skipped" }>;

/** The outcome as the record keeps it: the hook's `state` stays with the hook, its logs go on the record. */
export function recorded<P extends HookPoint>(outcome: HookOutcome<P>): CalledOutcome<P> {
  return outcome.type === "decided"
    ? { type: "decided", result: outcome.result }
    : { type: "failed", failure: outcome.failure };
}
