import { describe, expect, it } from "vitest";
import {
  createDispatcher,
  type DecisionEntry,
  type DecisionSink,
  type DispatchEvent,
  type DispatcherOptionsInput,
  type HookShadowedEvent,
} from "../../src/dispatch/index.js";
import { type ActiveBundle, BundleHash, type HookPoint } from "../../src/protocol/index.js";
import {
  bundleOf,
  FakeClock,
  FakeExecutor,
  type Respond,
  RUN,
  returned,
  sandboxFailed,
  TENANT,
  toolCallEvent,
} from "./helpers.js";

const V1 = BundleHash.parse(`sha256-${"1".repeat(64)}`);
const V2 = BundleHash.parse(`sha256-${"2".repeat(64)}`);

/** v1 active with v2 in shadow mode; `respond` answers v1's calls, `candidate` v2's. */
function shadowed(
  spec: {
    respond?: Respond;
    candidate?: Respond;
    options?: Omit<DispatcherOptionsInput, "executor">;
    points?: HookPoint[];
    candidatePoints?: HookPoint[];
  } = {},
) {
  const clock = new FakeClock();
  const events: DispatchEvent[] = [];
  const active = spec.respond ?? (() => returned(undefined));
  const candidate = spec.candidate ?? (() => returned({ type: "block", reason: "v2 blocks" }));
  const executor = new FakeExecutor((seen, signal) =>
    seen.bundle.hash === V2 ? candidate(seen, signal) : active(seen, signal),
  );
  const dispatcher = createDispatcher({ executor, clock: clock.read, emit: (e) => events.push(e), ...spec.options });
  const bundle: ActiveBundle = {
    ...bundleOf(spec.points ?? ["tool.call"], { version: 1, hash: V1 }),
    shadow: bundleOf(spec.candidatePoints ?? spec.points ?? ["tool.call"], { version: 2, hash: V2, config: { v: 2 } }),
  };
  const run = dispatcher.openRun({ tenantId: TENANT, runId: RUN, bundle });
  const shadowEvents = () => events.filter((e): e is HookShadowedEvent => e.type === "hook.shadowed");
  return { clock, events, executor, dispatcher, run, shadowEvents };
}

describe("shadow mode", () => {
  it("calls the candidate after the deciding hook with the same event and discards its result", async () => {
    const { run, executor, events, shadowEvents } = shadowed();
    expect(run.bundle?.version).toBe(1);
    expect(run.shadow?.version).toBe(2);
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision.type).toBe("execute");
    expect(records).toHaveLength(1);
    expect(executor.seen.map((s) => s.bundle.hash)).toEqual([V1, V2]);
    expect(executor.seen[1]?.call.eventJson).toBe(executor.seen[0]?.call.eventJson);
    expect(executor.seen[1]?.ctx).toMatchObject({ bundle: { version: 2, hash: V2 }, config: { v: 2 }, runId: RUN });
    expect(events.map((e) => e.type)).toEqual(["hook.called", "hook.shadowed"]);
    const [shadow] = shadowEvents();
    expect(shadow?.record).toBe(records[0]);
    expect(shadow?.shadow).toMatchObject({
      hookId: "tenant:acme@v2",
      bundle: { version: 2, hash: V2 },
      outcome: { type: "decided", result: { type: "block", reason: "v2 blocks" } },
    });
  });

  it("never changes the decision, whatever the candidate does", async () => {
    const outcomes: Respond[] = [
      () => returned({ type: "block", reason: "no" }),
      () => returned({ type: "rewrite", args: { path: "/etc/passwd" } }),
      () => sandboxFailed("timeout"),
      () => sandboxFailed("sandbox_crashed"),
      () => sandboxFailed("memory_limit"),
      () => returned({ type: "nonsense" }),
      () => {
        throw new Error("executor fell over");
      },
    ];
    for (const candidate of outcomes) {
      const { run } = shadowed({ candidate, respond: () => returned({ type: "rewrite", args: { path: "/tmp/y" } }) });
      const { decision } = await run.dispatch("tool.call", toolCallEvent(), { validateArgs: () => undefined });
      expect(decision).toEqual({ type: "execute", args: { path: "/tmp/y" }, rewritten: true });
    }
  });

  it("checks the candidate's result as the stack would have, and records the failure", async () => {
    const { run, shadowEvents } = shadowed({ candidate: () => returned({ type: "rewrite", args: { path: 7 } }) });
    await run.dispatch("tool.call", toolCallEvent(), {
      validateArgs: (args) => (typeof args.path === "string" ? undefined : "bad path"),
    });
    expect(shadowEvents()[0]?.shadow.outcome).toMatchObject({
      type: "failed",
      failure: { code: "invalid_result", message: expect.stringContaining("bad path") },
    });
  });

  it("gives the candidate a budget of its own: the run's budget and timeouts never pay for it", async () => {
    const { run, executor, shadowEvents } = shadowed({
      respond: () => returned(undefined, { runMs: 10 }),
      candidate: () => returned(undefined, { runMs: 120 }),
      options: { budgets: { turnMs: 200, runMs: 10_000 } },
    });
    run.beginTurn(1);
    for (let i = 0; i < 4; i++)
      expect((await run.dispatch("tool.call", toolCallEvent())).decision.type).toBe("execute");
    expect(run.spent()).toEqual({ turnMs: 40, runMs: 40 });
    // The candidate ran twice (240 ms > its 200 ms turn budget), then was denied; v1's timeout stayed whole.
    expect(executor.seen.filter((s) => s.bundle.hash === V2)).toHaveLength(2);
    expect(executor.seen.filter((s) => s.bundle.hash === V1).map((s) => s.call.timeoutMs)).toEqual([50, 50, 50, 50]);
    expect(
      shadowEvents().map((e) => (e.shadow.outcome.type === "failed" ? e.shadow.outcome.failure.code : "ok")),
    ).toEqual(["ok", "ok", "timeout", "timeout"]);
    run.beginTurn(2);
    await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen.filter((s) => s.bundle.hash === V2)).toHaveLength(3);
  });

  it("quarantines the candidate on its own failures, never the active bundle", async () => {
    const { run, dispatcher, executor, events } = shadowed({
      candidate: () => sandboxFailed("timeout", 1),
      options: {
        quarantine: { failures: 3, windowMs: 60_000, cooldownMs: 30_000, maxCooldownMs: 60_000, forgetAfterMs: 60_000 },
      },
    });
    for (let i = 0; i < 5; i++)
      expect((await run.dispatch("tool.call", toolCallEvent())).decision.type).toBe("execute");
    // The candidate's quarantine is its own (keyed apart even from the same hash deciding elsewhere).
    expect(dispatcher.quarantinedUntil(TENANT, V1)).toBeUndefined();
    expect(events.filter((e) => e.type === "quarantine.entered")).toMatchObject([{ bundleHash: V2 }]);
    expect(executor.seen.filter((s) => s.bundle.hash === V2)).toHaveLength(3);
    expect(executor.seen.filter((s) => s.bundle.hash === V1)).toHaveLength(5);
  });

  it("keeps the candidate's state apart from the active hook's, per run", async () => {
    let n = 0;
    const { run, executor } = shadowed({
      respond: (seen) =>
        returned(undefined, { state: { active: ((seen.ctx.state.active as number | undefined) ?? 0) + 1 } }),
      candidate: (seen) => returned(undefined, { state: { shadow: ++n, saw: seen.ctx.state } }),
    });
    await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("tool.call", toolCallEvent());
    const states = executor.seen.map((s) => [s.bundle.hash === V2 ? "v2" : "v1", s.ctx.state]);
    expect(states).toEqual([
      ["v1", {}],
      ["v2", {}],
      ["v1", { active: 1 }],
      ["v2", { shadow: 1, saw: {} }],
    ]);
  });

  it("calls the candidate alone where only it exports the point, and the run goes on with the no-op", async () => {
    const { run, executor, shadowEvents } = shadowed({
      points: ["tool.call"],
      candidatePoints: ["tool.call", "tool.result"],
      candidate: () => returned({ type: "patch", content: "[REDACTED]" }),
    });
    const event = {
      call: { id: "c1", name: "shell", args: {} },
      executed: true,
      result: { content: "secret", isError: false },
    };
    const { decision, records } = await run.dispatch("tool.result", event);
    expect(decision).toMatchObject({ type: "result", result: { content: "secret" }, patched: false });
    expect(records).toEqual([]);
    expect(executor.seen.map((s) => s.bundle.hash)).toEqual([V2]);
    const [shadow] = shadowEvents();
    expect(shadow?.record).toBeUndefined();
    expect(shadow?.shadow).toMatchObject({ point: "tool.result", outcome: { result: { type: "patch" } } });
  });

  it("skips the shadow in runs its own version decides", async () => {
    const executor = new FakeExecutor(() => returned(undefined));
    const dispatcher = createDispatcher({ executor });
    const v2 = bundleOf(["tool.call"], { version: 2, hash: V2 });
    const bundle: ActiveBundle = {
      ...bundleOf(["tool.call"], { version: 1, hash: V1 }),
      rollout: { bundle: v2, percent: 99.99 },
      shadow: v2,
    };
    const onV2 = dispatcher.openRun({ tenantId: TENANT, runId: RUN, bundle });
    expect([onV2.bundle?.version, onV2.shadow]).toEqual([2, undefined]);
    await onV2.dispatch("tool.call", toolCallEvent());
    expect(executor.seen).toHaveLength(1);
  });

  it("hands the decision log each call with the shadow's record beside it, in runs its sampling skipped too", async () => {
    for (const [sampled, logs, expected] of [
      [true, true, ["shadowed", "shadowed"]],
      [false, true, ["shadowed", "shadowed"]],
      [false, false, []],
    ] as const) {
      const entries: DecisionEntry[] = [];
      const decisionLog: DecisionSink = {
        sampled: () => sampled,
        logs: () => logs,
        record: (entry) => entries.push(entry),
      };
      const { run } = shadowed({ options: { decisionLog } });
      await run.dispatch("tool.call", toolCallEvent());
      await run.dispatch("tool.call", toolCallEvent());
      expect(entries.map((e) => (e.shadow === undefined ? "alone" : "shadowed"))).toEqual(expected);
      for (const entry of entries) {
        expect(entry.record.bundle?.version).toBe(1);
        expect(entry.shadow?.bundle?.version).toBe(2);
        expect(JSON.parse(entry.eventJson)).toEqual(toolCallEvent());
      }
    }
  });

  it("logs a sampled run's calls the candidate does not shadow alone, and an unsampled run's not at all", async () => {
    for (const [sampled, expected] of [
      [true, ["alone"]],
      [false, []],
    ] as const) {
      const entries: DecisionEntry[] = [];
      const decisionLog: DecisionSink = { sampled: () => sampled, logs: () => true, record: (e) => entries.push(e) };
      const { run } = shadowed({
        options: { decisionLog },
        points: ["tool.call", "turn.end"],
        candidatePoints: ["tool.call"],
      });
      await run.dispatch("turn.end", { turn: 0, messages: [] } as never);
      expect(entries.map((e) => (e.shadow === undefined ? "alone" : "shadowed"))).toEqual(expected);
    }
  });

  it("keeps the candidate's quarantine apart even when it shares the active bundle's code (a config change)", async () => {
    const executor = new FakeExecutor((seen) =>
      (seen.ctx.config as { v?: number }).v === 2 ? sandboxFailed("timeout", 1) : returned(undefined),
    );
    const quarantine = {
      failures: 2,
      windowMs: 60_000,
      cooldownMs: 30_000,
      maxCooldownMs: 60_000,
      forgetAfterMs: 60_000,
    };
    const dispatcher = createDispatcher({ executor, quarantine });
    const bundle: ActiveBundle = {
      ...bundleOf(["tool.call"], { version: 1, hash: V1 }),
      shadow: bundleOf(["tool.call"], { version: 2, hash: V1, config: { v: 2 } }),
    };
    const run = dispatcher.openRun({ tenantId: TENANT, runId: RUN, bundle });
    for (let i = 0; i < 4; i++) {
      expect((await run.dispatch("tool.call", toolCallEvent())).records[0]?.outcome).toMatchObject({ type: "decided" });
    }
    expect(dispatcher.quarantinedUntil(TENANT, V1)).toBeUndefined();
    // The candidate was cut off after its 2 strikes; the active version was called every time.
    expect(executor.seen.map((s) => (s.ctx.config as { v?: number }).v ?? 1)).toEqual([1, 2, 1, 2, 1, 1]);
  });
});
