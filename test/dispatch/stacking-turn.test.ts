import { describe, expect, it } from "vitest";
import { returned, sandboxFailed } from "./helpers.js";
import { setup } from "./setup.js";

const turnEvent = { turn: 1, message: { role: "assistant" as const, content: "done" }, toolResults: [] };

describe("turn.end stacking", () => {
  it("runs every hook and lets stop beat end beat continue", async () => {
    const { run, executor } = setup({
      points: ["turn.end"],
      first: [{ turnEnd: () => ({ type: "continue", message: "check the tests" }) }],
      respond: () => returned({ type: "stop", reason: "budget" }),
      last: [{ turnEnd: () => ({ type: "end", reason: "looks done" }) }],
    });
    const { decision, records } = await run.dispatch("turn.end", turnEvent);
    expect(decision).toEqual({ type: "stop", reason: "budget", by: { hookId: "tenant:acme@v3", source: "tenant" } });
    expect(records).toHaveLength(3);
    expect(executor.seen).toHaveLength(1);
  });

  it("lets end beat continue whatever the order", async () => {
    const { run } = setup({
      first: [{ turnEnd: () => ({ type: "end" }) }],
      last: [
        { turnEnd: () => ({ type: "continue", message: "more" }) },
        { turnEnd: () => ({ type: "end", reason: "b" }) },
      ],
    });
    expect((await run.dispatch("turn.end", turnEvent)).decision).toEqual({
      type: "end",
      by: { hookId: "first:0", source: "platform" },
    });
  });

  it("lets continue beat the default and keeps the first continue's message", async () => {
    const { run } = setup({
      first: [{ turnEnd: () => undefined }, { turnEnd: () => ({ type: "continue", message: "first" }) }],
      last: [{ turnEnd: () => ({ type: "continue", message: "second" }) }],
    });
    expect((await run.dispatch("turn.end", turnEvent)).decision).toEqual({
      type: "continue",
      message: "first",
      by: { hookId: "first:1", source: "platform" },
    });
  });

  it("decides the default when no hook returns anything", async () => {
    const { run } = setup({ points: ["turn.end"] });
    expect((await run.dispatch("turn.end", turnEvent)).decision).toEqual({ type: "default" });
  });
});

describe("output.validate stacking", () => {
  it("does not stop at an explicit accept and takes the first non-accept", async () => {
    const { run } = setup({
      points: ["output.validate"],
      first: [{ outputValidate: () => ({ type: "accept" }) }],
      respond: () => returned({ type: "retry", feedback: "cite sources" }),
      last: [{ outputValidate: () => ({ type: "fail", reason: "later" }) }],
    });
    const { decision, records } = await run.dispatch("output.validate", { output: "answer" });
    expect(decision).toEqual({
      type: "retry",
      feedback: "cite sources",
      by: { hookId: "tenant:acme@v3", source: "tenant" },
    });
    expect(records).toHaveLength(2);
  });

  it("accepts when every hook accepts", async () => {
    const { run } = setup({ points: ["output.validate"], respond: () => returned({ type: "accept" }) });
    expect((await run.dispatch("output.validate", { output: "answer" })).decision).toEqual({ type: "accept" });
  });
});

describe("run.end", () => {
  it("runs every hook and observes even when they fail under closed", async () => {
    let lastRan = false;
    const { run } = setup({
      points: ["run.end"],
      policy: { "run.end": "closed" },
      respond: () => sandboxFailed("timeout"),
      last: [
        {
          runEnd: () => {
            lastRan = true;
          },
        },
      ],
    });
    const { decision, records } = await run.dispatch("run.end", {
      stopReason: "completed",
      turns: 2,
      usage: { inputTokens: 1, outputTokens: 2 },
    });
    expect(decision).toEqual({ type: "observed" });
    expect(lastRan).toBe(true);
    expect(records.map((r) => r.outcome.type)).toEqual(["failed", "decided"]);
  });

  it("records any result as invalid_result", async () => {
    const { run } = setup({ points: ["run.end"], respond: () => returned({ type: "stop", reason: "x" }) });
    const { decision, records } = await run.dispatch("run.end", {
      stopReason: "completed",
      turns: 0,
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    expect(decision).toEqual({ type: "observed" });
    expect(records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
  });
});
