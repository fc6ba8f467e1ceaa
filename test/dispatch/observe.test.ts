import { describe, expect, it } from "vitest";
import { createDispatcher, type DispatchEvent } from "../../src/dispatch/index.js";
import type { BundleManifest } from "../../src/protocol/index.js";
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

const resultEvent = (name = "shell") => ({
  call: { id: "c1", name, args: {} },
  executed: true,
  result: { content: "ok", isError: false },
});

function observed(
  manifest: Partial<BundleManifest>,
  respond: Respond = () => returned({ type: "stop", reason: "ignored" }),
) {
  const events: DispatchEvent[] = [];
  const executor = new FakeExecutor(respond);
  const dispatcher = createDispatcher({
    executor,
    clock: new FakeClock().read,
    emit: (e) => events.push(e),
    budgets: { turnMs: 10_000, runMs: 10_000 },
  });
  const base = bundleOf(manifest.hookPoints ?? []);
  const bundle = { ...base, manifest: { ...base.manifest, ...manifest } };
  const run = dispatcher.openRun({ tenantId: TENANT, runId: RUN, bundle });
  run.beginTurn(0);
  return { events, executor, dispatcher, run };
}

describe("observe-only calls in the dispatcher", () => {
  it("are queued after the decision, never awaited, and never charged to the run's budgets", async () => {
    const { executor, run, events } = observed(
      { hookPoints: ["tool.call"], observe: { hookPoints: ["tool.result"] } },
      () => returned(undefined, { runMs: 1_000 }),
    );
    for (let i = 0; i < 3; i++) {
      expect((await run.dispatch("tool.call", toolCallEvent())).decision.type).toBe("execute");
      const { decision, records } = await run.dispatch("tool.result", resultEvent());
      expect(decision.type).toBe("result");
      expect(records).toEqual([]);
    }
    await run.observed();
    // Each call ran 1 s: the decisions' 3 s are charged, the observers' 3 s are not.
    expect(run.spent()).toEqual({ turnMs: 3_000, runMs: 3_000 });
    expect(executor.seen.map((s) => s.call.priority ?? "decision")).toEqual([
      "decision",
      "observe",
      "decision",
      "observe",
      "decision",
      "observe",
    ]);
    const observeRecords = events.flatMap((e) => (e.type === "hook.called" && e.record.observe ? [e.record] : []));
    expect(observeRecords).toHaveLength(3);
  });

  it("hands the observers their own state, one call after the other, apart from the deciding handler's", async () => {
    let n = 0;
    const { executor, run } = observed({ hookPoints: ["tool.call"], observe: { hookPoints: ["tool.result"] } }, () =>
      returned(undefined, { state: { n: ++n } }),
    );
    await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("tool.result", resultEvent());
    await run.dispatch("tool.result", resultEvent());
    await run.dispatch("tool.call", toolCallEvent());
    await run.observed();
    const states = executor.seen.map((s) => [s.call.priority ?? "decision", s.ctx.state]);
    expect(states).toEqual([
      ["decision", {}],
      ["observe", {}],
      ["decision", { n: 1 }],
      ["observe", { n: 2 }],
    ]);
  });

  it("skips an observe call no observe matcher selects, without a record", async () => {
    const { executor, run, events } = observed({
      hookPoints: [],
      observe: { hookPoints: ["tool.result"], tools: { "tool.result": ["git_*"] } },
    });
    await run.dispatch("tool.result", resultEvent("shell"));
    await run.dispatch("tool.result", resultEvent("git_push"));
    await run.observed();
    expect(executor.seen.map((s) => (s.event.call as { name: string }).name)).toEqual(["git_push"]);
    expect(events.filter((e) => e.type === "hook.called")).toHaveLength(1);
  });

  it("strikes quarantine for an observer's timeouts, and then no longer calls it", async () => {
    const { executor, run, events } = observed({ hookPoints: [], observe: { hookPoints: ["tool.result"] } }, () =>
      sandboxFailed("timeout"),
    );
    for (let i = 0; i < 7; i++) await run.dispatch("tool.result", resultEvent());
    await run.observed();
    expect(executor.seen).toHaveLength(5);
    const codes = events.flatMap((e) =>
      e.type === "hook.called" && e.record.outcome.type === "failed" ? [e.record.outcome.failure.code] : [],
    );
    expect(codes).toEqual(["timeout", "timeout", "timeout", "timeout", "timeout", "quarantined", "quarantined"]);
  });

  it("records skipped calls of a decision matcher and never calls the executor for them", async () => {
    const { executor, run } = observed({ hookPoints: ["tool.call"], tools: { "tool.call": ["shell"] } });
    const skipped = await run.dispatch("tool.call", {
      ...toolCallEvent(),
      call: { id: "c9", name: "read_file", args: {} },
    });
    expect(skipped.records).toMatchObject([{ outcome: { type: "skipped", reason: "no match" }, runMs: 0 }]);
    expect(skipped.decision.type).toBe("execute");
    expect(executor.seen).toHaveLength(0);
  });

  it("close() drops queued observe calls without a record and resolves", async () => {
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { executor, run, dispatcher, events } = observed(
      { hookPoints: [], observe: { hookPoints: ["tool.result"] } },
      async () => {
        await gate;
        return returned(undefined);
      },
    );
    for (let i = 0; i < 4; i++) await run.dispatch("tool.result", resultEvent());
    const closed = dispatcher.close();
    release();
    await closed;
    await run.observed();
    expect(executor.seen.length).toBeLessThanOrEqual(1);
    expect(events.filter((e) => e.type === "hook.called").length).toBeLessThanOrEqual(1);
  });
});
