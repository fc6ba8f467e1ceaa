import { describe, expect, it } from "vitest";
import { returned, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

describe("tool.call stacking", () => {
  it("chains rewrites so each hook sees the args after earlier rewrites", async () => {
    const seenByLast: unknown[] = [];
    const { run, executor } = setup({
      points: ["tool.call"],
      first: [{ toolCall: (e) => ({ type: "rewrite", args: { ...e.call.args, cwd: "/safe" } }) }],
      respond: (seen) => {
        const call = seen.event.call as { args: Record<string, unknown> };
        return returned({ type: "rewrite", args: { ...call.args, limit: 5 } });
      },
      last: [
        {
          toolCall: (e) => {
            seenByLast.push(e.call.args);
          },
        },
      ],
    });
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent({ path: "/x" }));
    expect(executor.seen[0]?.event.call).toMatchObject({ args: { path: "/x", cwd: "/safe" } });
    expect((executor.seen[0]?.event.call as { args: unknown } | undefined)?.args).toEqual({ path: "/x", cwd: "/safe" });
    expect(seenByLast).toEqual([{ path: "/x", cwd: "/safe", limit: 5 }]);
    expect(decision).toEqual({ type: "execute", args: { path: "/x", cwd: "/safe", limit: 5 }, rewritten: true });
    expect(records.map((r) => r.hookId)).toEqual(["first:0", "tenant:acme@v3", "last:0"]);
  });

  it("keeps an earlier rewrite on the record when a later hook blocks", async () => {
    const { run } = setup({
      points: ["tool.call"],
      respond: () => returned({ type: "rewrite", args: { path: "/tmp/safe" } }),
      last: [{ toolCall: (e) => ({ type: "block", reason: `no writes to ${String(e.call.args.path)}` }) }],
    });
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent({ path: "/etc/passwd" }));
    expect(decision).toEqual({
      type: "block",
      reason: "no writes to /tmp/safe",
      terminate: false,
      args: { path: "/tmp/safe" },
      by: { hookId: "last:0", source: "platform" },
    });
    expect(records[0]?.outcome).toEqual({ type: "decided", result: { type: "rewrite", args: { path: "/tmp/safe" } } });
  });

  it("lets the first block win and never calls later hooks", async () => {
    let lastCalled = false;
    const { run, executor } = setup({
      points: ["tool.call"],
      first: [{ toolCall: () => ({ type: "block", reason: "first says no", terminate: true }) }],
      last: [
        {
          toolCall: () => {
            lastCalled = true;
            return { type: "block", reason: "last says no" };
          },
        },
      ],
    });
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toMatchObject({ type: "block", reason: "first says no", terminate: true });
    expect(executor.seen).toHaveLength(0);
    expect(lastCalled).toBe(false);
    expect(records).toHaveLength(1);
  });

  it("turns a stop into a stop decision", async () => {
    const { run } = setup({ points: ["tool.call"], respond: () => returned({ type: "stop", reason: "enough" }) });
    const { decision } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toEqual({ type: "stop", reason: "enough", by: { hookId: "tenant:acme@v3", source: "tenant" } });
  });

  it("fails a rewrite the tool's schema rejects as invalid_result of that hook", async () => {
    const { run } = setup({ points: ["tool.call"], respond: () => returned({ type: "rewrite", args: { path: 42 } }) });
    const validateArgs = (args: Record<string, unknown>) =>
      typeof args.path === "string" ? undefined : "path: expected a string";
    const closed = await run.dispatch("tool.call", toolCallEvent(), { validateArgs });
    expect(closed.decision).toMatchObject({ type: "block", reason: "invalid_result", args: { path: "/tmp/x" } });
    expect(closed.records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
    expect(closed.records[0]?.outcome.type === "failed" && closed.records[0].outcome.failure.message).toContain(
      "path: expected a string",
    );

    const open = setup({
      points: ["tool.call"],
      policy: { "tool.call": "open" },
      respond: () => returned({ type: "rewrite", args: { path: 42 } }),
    });
    const opened = await open.run.dispatch("tool.call", toolCallEvent(), { validateArgs });
    expect(opened.decision).toEqual({ type: "execute", args: { path: "/tmp/x" }, rewritten: false });
  });
});

describe("tool.result stacking", () => {
  const event = {
    call: { id: "c1", name: "shell", args: {} },
    executed: true,
    result: { content: "key=sk-123", isError: false, details: { rows: 3 } },
  };

  it("chains patches field by field", async () => {
    const { run, executor } = setup({
      points: ["tool.result"],
      first: [{ toolResult: () => ({ type: "patch", content: "key=[redacted]" }) }],
      respond: () => returned({ type: "patch", isError: true, terminate: true }),
      last: [{ toolResult: (e) => ({ type: "patch", content: `${e.result.content}!` }) }],
    });
    const { decision } = await run.dispatch("tool.result", event);
    expect((executor.seen[0]?.event.result as { content: string } | undefined)?.content).toBe("key=[redacted]");
    expect(decision).toEqual({
      type: "result",
      result: { content: "key=[redacted]!", isError: true, details: { rows: 3 } },
      terminate: true,
      terminatedBy: { hookId: "tenant:acme@v3", source: "tenant" },
      patched: true,
    });
  });

  it("lets a later patch take back an earlier terminate", async () => {
    const { run } = setup({
      points: ["tool.result"],
      respond: () => returned({ type: "patch", terminate: true }),
      last: [{ toolResult: () => ({ type: "patch", terminate: false }) }],
    });
    expect((await run.dispatch("tool.result", event)).decision).toEqual({
      type: "result",
      result: event.result,
      terminate: false,
      patched: false,
    });
  });

  it("lets the first stop win", async () => {
    const { run } = setup({
      points: ["tool.result"],
      respond: () => returned({ type: "stop", reason: "leak" }),
      last: [{ toolResult: () => ({ type: "stop", reason: "later" }) }],
    });
    const { decision, records } = await run.dispatch("tool.result", event);
    expect(decision).toMatchObject({ type: "stop", reason: "leak" });
    expect(records).toHaveLength(1);
  });
});

describe("tool.invalid stacking", () => {
  const event = { call: { id: "c1", name: "shel", args: {} }, reason: "unknownTool" as const, available: ["shell"] };

  it("fails by default when no hook decides", async () => {
    const { run } = setup({ points: ["tool.invalid"], last: [{ toolInvalid: () => undefined }] });
    expect((await run.dispatch("tool.invalid", event)).decision).toEqual({ type: "fail" });
  });

  it("takes the first non-continue result", async () => {
    const { run } = setup({
      points: ["tool.invalid"],
      first: [{ toolInvalid: () => undefined }],
      respond: () => returned({ type: "repair", name: "shell" }),
      last: [{ toolInvalid: () => ({ type: "skip", reason: "later" }) }],
    });
    const { decision, records } = await run.dispatch("tool.invalid", event);
    expect(decision).toEqual({ type: "repair", name: "shell", by: { hookId: "tenant:acme@v3", source: "tenant" } });
    expect(records).toHaveLength(2);
  });
});
