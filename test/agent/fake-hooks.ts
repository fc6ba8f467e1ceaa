import { raceAbort } from "../../src/agent/abort.js";
import {
  type Dispatched,
  type DispatchOptions,
  type HookRecord,
  type PointDecision,
  type PointRule,
  RULES,
  type RunDispatcher,
} from "../../src/dispatch/index.js";
import { type HookEvent, HookId, type HookPoint, RunId, TenantId } from "../../src/protocol/index.js";

type Override<P extends HookPoint> = (
  event: HookEvent<P>,
  options: DispatchOptions,
) => PointDecision<P> | Promise<PointDecision<P>>;

export type Overrides = { [P in HookPoint]?: Override<P> };

export const TEST_HOOK = { hookId: HookId.parse("test-hook"), source: "tenant" as const };

export interface FakeHooks extends RunDispatcher {
  /** Every point called, in order, with the turn it was called in and a snapshot of its event. */
  readonly calls: { point: HookPoint; turn: number; event: unknown }[];
  points(): HookPoint[];
}

/** A run scope whose points decide the no-op unless a test overrides them; records every call. */
export function fakeHooks(overrides: Overrides = {}): FakeHooks {
  const calls: FakeHooks["calls"] = [];
  let turn = 0;
  const call = async <P extends HookPoint>(
    point: P,
    event: HookEvent<P>,
    options: DispatchOptions | undefined,
    fallback: PointDecision<P>,
  ): Promise<Dispatched<P>> => {
    options?.signal?.throwIfAborted();
    calls.push({ point, turn, event: structuredClone(event) });
    const override = overrides[point] as Override<P> | undefined;
    if (!override) return { decision: fallback, records: [] as HookRecord<P>[] };
    const pending = new Promise<PointDecision<P>>((resolve) => resolve(override(event, (options ?? {}) as never)));
    // Like the real dispatcher: a point's promise rejects as soon as its signal aborts.
    const signal = options?.signal;
    const decision = await (signal ? raceAbort(pending, signal) : pending);
    const records: HookRecord<P>[] = [record(point)];
    return { decision, records };
  };
  return {
    calls,
    points: () => calls.map((c) => c.point),
    tenantId: TenantId.parse("tenant"),
    runId: RunId.parse("run-1"),
    beginTurn(n) {
      turn = n;
    },
    spent: () => ({ turnMs: 0, runMs: 0 }),
    observed: () => Promise.resolve(),

    snapshot: () => ({ turn, spent: { turnMs: 0, runMs: 0 }, states: {} }),
    pause: () => {},
    // With no override a point decides what the stack decides when no hook runs: its row's no-op.
    dispatch<P extends HookPoint>(point: P, event: HookEvent<P>, options?: DispatchOptions) {
      const rule: PointRule<P> = RULES[point];
      return call(point, event, options, rule.decide(rule.start(event)));
    },
  };
}

function record<P extends HookPoint>(point: P): HookRecord<P> {
  return {
    point,
    hookId: TEST_HOOK.hookId,
    source: "tenant",
    bundle: undefined,
    outcome: { type: "decided", result: null },
    policy: "open",
    runMs: 0,
    cpuMs: 0,
    logs: [],
  };
}
