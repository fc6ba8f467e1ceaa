import { raceAbort } from "../../src/agent/abort.js";
import type {
  DispatchOptions,
  HookRecord,
  PointDecision,
  RunDispatcher,
  ToolCallDispatchOptions,
} from "../../src/dispatch/index.js";
import { type HookEvent, HookId, type HookPoint, RunId, TenantId } from "../../src/protocol/index.js";

type Override<P extends HookPoint> = (
  event: HookEvent<P>,
  options: P extends "tool.call" ? ToolCallDispatchOptions : DispatchOptions,
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
  ) => {
    options?.signal?.throwIfAborted();
    calls.push({ point, turn, event: structuredClone(event) });
    const override = overrides[point] as Override<P> | undefined;
    if (!override) return { decision: fallback, records: [] };
    const pending = Promise.resolve(override(event, (options ?? {}) as never));
    // Like the real dispatcher: a point's promise rejects as soon as its signal aborts.
    const signal = options?.signal;
    const decision = signal ? await raceAbort(pending, signal) : await pending;
    return { decision, records: [record(point)] };
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
    runStart: (e, o) => call("run.start", e, o, { type: "proceed", input: e.input, rewritten: false }),
    inputInbound: (e, o) => call("input.inbound", e, o, { type: "deliver", message: e.message, rewritten: false }),
    contextPrepare: (e, o) =>
      call("context.prepare", e, o, { type: "messages", messages: e.messages, replaced: false }),
    toolsPrepare: (e, o) => call("tools.prepare", e, o, { type: "tools", tools: e.tools, restricted: false }),
    modelRequest: (e, o) => call("model.request", e, o, { type: "request", patch: {}, patched: false }),
    modelResponse: (e, o) => call("model.response", e, o, { type: "accept", message: e.message, replaced: false }),
    toolInvalid: (e, o) => call("tool.invalid", e, o, { type: "fail" }),
    toolCall: (e, o) => call("tool.call", e, o, { type: "execute", args: e.call.args, rewritten: false }),
    toolResult: (e, o) =>
      call("tool.result", e, o, { type: "result", result: e.result, terminate: false, patched: false }),
    turnEnd: (e, o) => call("turn.end", e, o, { type: "default" }),
    outputValidate: (e, o) => call("output.validate", e, o, { type: "accept" }),
    runEnd: (e, o) => call("run.end", e, o, { type: "observed" }),
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
