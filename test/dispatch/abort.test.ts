import { describe, expect, it } from "vitest";
import { returned, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

describe("abort", () => {
  it("rejects with the signal's reason before calling any hook when already aborted", async () => {
    const { run, executor } = setup({ points: ["tool.call"] });
    const controller = new AbortController();
    controller.abort(new Error("user cancelled"));
    await expect(run.dispatch("tool.call", toolCallEvent(), { signal: controller.signal })).rejects.toThrow(
      "user cancelled",
    );
    expect(executor.seen).toHaveLength(0);
  });

  it("rejects mid-call and does not call later hooks", async () => {
    const controller = new AbortController();
    let lastCalled = false;
    const { run } = setup({
      points: ["tool.call"],
      respond: (_seen, signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener("abort", () => reject(signal.reason));
          controller.abort(new Error("stop now"));
        }),
      last: [
        {
          toolCall: () => {
            lastCalled = true;
          },
        },
      ],
    });
    await expect(run.dispatch("tool.call", toolCallEvent(), { signal: controller.signal })).rejects.toThrow("stop now");
    expect(lastCalled).toBe(false);
  });

  it("rejects a pending platform hook on abort and hands the signal to it", async () => {
    const controller = new AbortController();
    let sawSignal: AbortSignal | undefined;
    let called = () => {};
    const calledPromise = new Promise<void>((resolve) => {
      called = resolve;
    });
    const { run } = setup({
      first: [
        {
          turnEnd: (_e, ctx) => {
            sawSignal = ctx.signal;
            called();
            return new Promise(() => {});
          },
        },
      ],
    });
    const pending = run.dispatch(
      "turn.end",
      { turn: 0, message: { role: "assistant", content: "" }, toolResults: [] },
      { signal: controller.signal },
    );
    await calledPromise;
    controller.abort(new Error("bye"));
    await expect(pending).rejects.toThrow("bye");
    expect(sawSignal?.aborted).toBe(true);
  });

  it("rejects a dispatch waiting behind another one and keeps the queue working", async () => {
    let release = () => {};
    const { run, executor } = setup({
      points: ["tool.call"],
      respond: () =>
        new Promise((resolve) => {
          release = () => resolve(returned(undefined));
        }),
    });
    const first = run.dispatch("tool.call", toolCallEvent());
    const controller = new AbortController();
    const queued = run.dispatch("tool.call", toolCallEvent(), { signal: controller.signal });
    controller.abort(new Error("queued abort"));
    await expect(queued).rejects.toThrow("queued abort");
    await Promise.resolve();
    release();
    expect((await first).decision.type).toBe("execute");
    executor.respondWith(() => returned({ type: "block", reason: "third" }));
    expect((await run.dispatch("tool.call", toolCallEvent())).decision).toMatchObject({
      type: "block",
      reason: "third",
    });
  });

  it("serialises dispatches of one run so state passes from call to call", async () => {
    const { run, executor } = setup({
      points: ["tool.call"],
      respond: async (seen) => {
        await new Promise((r) => setTimeout(r, 1));
        return returned(undefined, { state: { n: Number(seen.ctx.state.n ?? 0) + 1 } });
      },
    });
    await Promise.all([
      run.dispatch("tool.call", toolCallEvent()),
      run.dispatch("tool.call", toolCallEvent()),
      run.dispatch("tool.call", toolCallEvent()),
    ]);
    expect(executor.seen.map((s) => s.ctx.state)).toEqual([{}, { n: 1 }, { n: 2 }]);
  });
});
