import { describe, expect, it } from "vitest";
import { returned, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

describe("hook time budgets", () => {
  it("fails a call as timeout without running once the turn budget is spent, and refills next turn", async () => {
    const { run, executor } = setup({
      points: ["tool.call"],
      respond: () => returned(undefined, { runMs: 60 }),
      options: { budgets: { turnMs: 100, runMs: 10_000 } },
    });
    run.beginTurn(1);
    expect((await run.dispatch("tool.call", toolCallEvent())).decision.type).toBe("execute");
    expect((await run.dispatch("tool.call", toolCallEvent())).decision.type).toBe("execute");
    const denied = await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen).toHaveLength(2);
    expect(denied.decision).toMatchObject({ type: "block", reason: "timeout" });
    expect(denied.records[0]).toMatchObject({ runMs: 0, outcome: { failure: { code: "timeout" } } });
    expect(denied.records[0]?.outcome.type === "failed" && denied.records[0].outcome.failure.message).toContain(
      "turn's hook time budget of 100 ms",
    );
    expect(run.spent()).toEqual({ turnMs: 120, runMs: 120 });

    run.beginTurn(2);
    expect((await run.dispatch("tool.call", toolCallEvent())).decision.type).toBe("execute");
    expect(executor.seen).toHaveLength(3);
  });

  it("fails calls once the run budget is spent, across turns", async () => {
    const { run, executor } = setup({
      points: ["tool.call"],
      respond: () => returned(undefined, { runMs: 80 }),
      options: { budgets: { turnMs: 100, runMs: 150 } },
    });
    run.beginTurn(0);
    await run.dispatch("tool.call", toolCallEvent());
    run.beginTurn(1);
    await run.dispatch("tool.call", toolCallEvent());
    run.beginTurn(2);
    const denied = await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen).toHaveLength(2);
    expect(denied.records[0]?.outcome.type === "failed" && denied.records[0].outcome.failure.message).toContain(
      "run's hook time budget of 150 ms",
    );
  });

  it("passes what is left of the budget down as the call's timeout when it is shorter", async () => {
    const { run, executor } = setup({
      points: ["tool.call"],
      respond: () => returned(undefined, { runMs: 70 }),
      options: { budgets: { turnMs: 100, runMs: 10_000 }, limits: { timeoutMs: 50 } },
    });
    await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen.map((s) => s.call.timeoutMs)).toEqual([50, 30]);
  });

  it("does not charge platform hooks", async () => {
    const { run } = setup({ first: [{ toolCall: () => undefined }], options: { budgets: { turnMs: 1, runMs: 1 } } });
    await run.dispatch("tool.call", toolCallEvent());
    expect((await run.dispatch("tool.call", toolCallEvent())).records[0]?.outcome).toEqual({
      type: "decided",
      result: null,
    });
  });
});
