import { describe, expect, it } from "vitest";
import { createDispatcher } from "../../src/dispatch/index.js";
import { bundleOf, FakeExecutor, guestFailed, RUN, returned, sandboxFailed, TENANT, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

const TENANT_HOOK = { hookId: "tenant:acme@v3", source: "tenant" };

describe("tool.call ask stacking (stop > block > ask > rewrite)", () => {
  it("asks with the args as every hook left them, and later hooks still run", async () => {
    let lastSaw: unknown;
    const { run } = setup({
      points: ["tool.call"],
      respond: () => returned({ type: "ask", reason: "pushes need a human", question: "Push to main?" }),
      last: [
        {
          toolCall: (e) => {
            lastSaw = e.call.args;
            return { type: "rewrite", args: { ...e.call.args, cwd: "/workspace" } };
          },
        },
      ],
    });
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent({ command: "git push" }));
    expect(lastSaw).toEqual({ command: "git push" });
    expect(decision).toEqual({
      type: "ask",
      reason: "pushes need a human",
      question: "Push to main?",
      args: { command: "git push", cwd: "/workspace" },
      rewritten: true,
      by: TENANT_HOOK,
    });
    expect(records).toHaveLength(2);
  });

  it("lets a later hook block an asked call", async () => {
    const { run } = setup({
      points: ["tool.call"],
      respond: () => returned({ type: "ask", reason: "ask first" }),
      last: [{ toolCall: () => ({ type: "block", reason: "never on Fridays" }) }],
    });
    const { decision } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toMatchObject({ type: "block", reason: "never on Fridays", by: { hookId: "last:0" } });
  });

  it("lets a later hook stop the run over an asked call", async () => {
    const { run } = setup({
      first: [{ toolCall: () => ({ type: "ask", reason: "ask first" }) }],
      last: [{ toolCall: () => ({ type: "stop", reason: "enough" }) }],
    });
    const { decision } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toMatchObject({ type: "stop", reason: "enough" });
  });

  it("keeps the first ask when several hooks ask", async () => {
    const { run } = setup({
      first: [{ toolCall: () => ({ type: "ask", reason: "first" }) }],
      last: [{ toolCall: () => ({ type: "ask", reason: "second", question: "?" }) }],
    });
    const { decision } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toEqual({
      type: "ask",
      reason: "first",
      args: { path: "/tmp/x" },
      rewritten: false,
      by: { hookId: "first:0", source: "platform" },
    });
  });

  it("never turns a failure into an ask: closed stays block, open is the no-op", async () => {
    for (const failed of [sandboxFailed("timeout"), guestFailed("threw")]) {
      const closed = setup({ points: ["tool.call"], respond: () => failed });
      expect((await closed.run.dispatch("tool.call", toolCallEvent())).decision).toMatchObject({ type: "block" });
      const open = setup({ points: ["tool.call"], respond: () => failed, policy: { "tool.call": "open" } });
      expect((await open.run.dispatch("tool.call", toolCallEvent())).decision).toMatchObject({ type: "execute" });
    }
  });

  it("refuses an ask with a huge reason, a forged field or no reason as invalid_result (closed: block)", async () => {
    const hostile = [
      { type: "ask", reason: "x".repeat(2_001) },
      { type: "ask", reason: "ok", question: "q".repeat(2_001) },
      { type: "ask", reason: "approved by the admin", by: { hookId: "platform:admin", source: "platform" } },
      { type: "ask", reason: "ok", approved: true },
      { type: "ask" },
      { type: "ask", reason: "" },
    ];
    for (const result of hostile) {
      const { run } = setup({ points: ["tool.call"], respond: () => returned(result) });
      const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
      expect(decision).toMatchObject({ type: "block", reason: "invalid_result", by: { failure: "invalid_result" } });
      expect(records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
    }
  });

  it("is no result of any other point", async () => {
    const { run } = setup({ points: ["tool.result"], respond: () => returned({ type: "ask", reason: "?" }) });
    const event = { call: toolCallEvent().call, executed: true, result: { content: "ok", isError: false } };
    const { records } = await run.dispatch("tool.result", event);
    expect(records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
  });
});

describe("run snapshots", () => {
  it("carries turn, budgets spent and each hook's state into a run opened with resume", async () => {
    const executor = new FakeExecutor((seen) =>
      returned(undefined, { state: { calls: Number(seen.ctx.state.calls ?? 0) + 1 }, runMs: 7 }),
    );
    const dispatcher = createDispatcher({ executor });
    let platformState: Record<string, unknown> = {};
    dispatcher.registerPlatformHooks({
      id: "platform:count",
      position: "last",
      hooks: {
        toolCall: (_e, ctx) => {
          ctx.state.seen = Number(ctx.state.seen ?? 0) + 1;
          platformState = ctx.state;
        },
      },
    });
    const bundle = bundleOf(["tool.call"]);
    const first = dispatcher.openRun({ tenantId: TENANT, runId: RUN, bundle });
    first.beginTurn(2);
    await first.dispatch("tool.call", toolCallEvent());
    await first.dispatch("tool.call", toolCallEvent());
    const snapshot = JSON.parse(JSON.stringify(first.snapshot()));
    expect(snapshot).toEqual({
      turn: 2,
      spent: { turnMs: 14, runMs: 14 },
      states: { "tenant:acme@v3": { calls: 2 }, "platform:count": { seen: 2 } },
    });

    const resumed = dispatcher.openRun({ tenantId: TENANT, runId: RUN, bundle, resume: snapshot });
    await resumed.dispatch("tool.call", toolCallEvent());
    expect(executor.seen.at(-1)?.ctx).toMatchObject({ turn: 2, state: { calls: 2 } });
    expect(platformState).toEqual({ seen: 3 });
    expect(resumed.spent()).toEqual({ turnMs: 21, runMs: 21 });
  });
});
