import { describe, expect, it } from "vitest";
import { bundleOf, RUN, returned, TENANT, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

describe("ctx and state", () => {
  it("hands the tenant hook its ctx with tenant, run, turn, hook id, bundle and config", async () => {
    const { run, executor } = setup({ points: ["tool.call"] });
    run.beginTurn(4);
    await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen[0]?.ctx).toEqual({
      tenantId: "acme",
      runId: "run-1",
      turn: 4,
      hookId: "tenant:acme@v3",
      bundle: { version: 3, hash: bundleOf([]).manifest.hash },
      config: { limit: 10 },
      state: {},
    });
  });

  it("round-trips state from one call's reply to the next call of the run", async () => {
    const { run, executor } = setup({
      points: ["tool.call", "turn.end"],
      respond: (seen) => {
        const count = Number(seen.ctx.state.count ?? 0) + 1;
        return returned(undefined, { state: { count } });
      },
    });
    await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("turn.end", { turn: 0, message: { role: "assistant", content: "" }, toolResults: [] });
    expect(executor.seen.map((s) => s.ctx.state)).toEqual([{}, { count: 1 }, { count: 2 }]);
  });

  it("keeps the previous state when a reply carries none", async () => {
    let n = 0;
    const { run, executor } = setup({
      points: ["tool.call"],
      respond: () => (n++ === 0 ? returned(undefined, { state: { seen: true } }) : returned(undefined)),
    });
    for (let i = 0; i < 3; i++) await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen[2]?.ctx.state).toEqual({ seen: true });
  });

  it("fails a reply whose state is over the cap as result_too_large and keeps the old state", async () => {
    const { run, executor } = setup({
      points: ["tool.call"],
      options: { limits: { maxStateChars: 64 } },
      respond: (seen) =>
        seen.ctx.state.ok
          ? returned({ type: "block", reason: "x" }, { state: { big: "y".repeat(100) } })
          : returned(undefined, { state: { ok: 1 } }),
    });
    await run.dispatch("tool.call", toolCallEvent());
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toMatchObject({ type: "block", reason: "result_too_large" });
    expect(records[0]?.outcome.type === "failed" && records[0].outcome.failure.message).toContain("state is");
    await run.dispatch("tool.call", toolCallEvent());
    expect(executor.seen[2]?.ctx.state).toEqual({ ok: 1 });
  });

  it("gives each run its own state", async () => {
    const { dispatcher, executor, bundle } = setup({
      points: ["tool.call"],
      respond: (seen) => returned(undefined, { state: { runs: [seen.ctx.runId] } }),
    });
    const a = dispatcher.openRun({ tenantId: TENANT, runId: RUN, bundle });
    const b = dispatcher.openRun({ tenantId: TENANT, runId: "run-2" as typeof RUN, bundle });
    await a.dispatch("tool.call", toolCallEvent());
    await b.dispatch("tool.call", toolCallEvent());
    expect(executor.seen[1]?.ctx.state).toEqual({});
  });

  it("keeps a platform hook's state object across calls", async () => {
    const counts: number[] = [];
    const { run } = setup({
      first: [
        {
          toolCall: (_e, ctx) => {
            ctx.state.n = Number(ctx.state.n ?? 0) + 1;
            counts.push(ctx.state.n);
          },
        },
      ],
    });
    await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("tool.call", toolCallEvent());
    expect(counts).toEqual([1, 2]);
  });
});

describe("skipping unexported points", () => {
  it("never calls the executor at a point the bundle does not export", async () => {
    const { run, executor, events } = setup({
      points: ["turn.end"],
      respond: () => returned({ type: "block", reason: "x" }),
    });
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision.type).toBe("execute");
    expect(records).toEqual([]);
    expect(executor.seen).toHaveLength(0);
    expect(events).toEqual([]);
  });

  it("serialises the event only for the sandbox, once per call", async () => {
    let serialised = 0;
    const args = { path: "/x" };
    Object.defineProperty(args, "toJSON", {
      enumerable: false,
      value: () => {
        serialised++;
        return { path: "/x" };
      },
    });
    const platformOnly = setup({ first: [{ toolCall: () => undefined }], last: [{ toolCall: () => undefined }] });
    await platformOnly.run.dispatch("tool.call", toolCallEvent(args));
    expect(serialised).toBe(0);
    const stacked = setup({
      points: ["tool.call"],
      first: [{ toolCall: () => undefined }],
      last: [{ toolCall: () => undefined }],
    });
    await stacked.run.dispatch("tool.call", toolCallEvent(args));
    expect(serialised).toBe(1);
    expect(stacked.executor.seen[0]?.event).toEqual({
      call: { id: "c1", name: "shell", args: { path: "/x" } },
      batch: { index: 0, size: 1 },
    });
  });
});
