import { describe, expect, it } from "vitest";
import type { HookEvent, HookPoint } from "../../src/protocol/index.js";
import { type SandboxResult, TenantId } from "../../src/protocol/index.js";
import { bundleOf, guestFailed, RUN, returned, sandboxFailed, toolCallEvent } from "./helpers.js";
import { setup } from "./setup.js";

const FAILURES: [string, () => SandboxResult][] = [
  ["timeout", () => sandboxFailed("timeout")],
  ["memory_limit", () => sandboxFailed("memory_limit")],
  ["sandbox_crashed", () => sandboxFailed("sandbox_crashed")],
  ["unavailable", () => sandboxFailed("unavailable")],
  ["threw", () => guestFailed("threw")],
  ["pending", () => guestFailed("pending")],
  ["result_too_large", () => guestFailed("result_too_large")],
  ["invalid_result", () => guestFailed("invalid_result")],
  ["invalid_result", () => ({ type: "replied", reply: "not json", cpuMs: 0, runMs: 1 })],
  ["invalid_result", () => returned({ type: "block" })],
  ["result_too_large", () => ({ type: "replied", reply: "x".repeat(200_000), cpuMs: 0, runMs: 1 })],
];

describe("failure policy on tool.call", () => {
  it.each(FAILURES)("blocks with the code as reason on %s under closed", async (code, outcome) => {
    const { run } = setup({ points: ["tool.call"], respond: outcome });
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toEqual({
      type: "block",
      reason: code,
      terminate: false,
      args: { path: "/tmp/x" },
      by: { hookId: "tenant:acme@v3", source: "tenant", failure: code },
    });
    expect(records[0]).toMatchObject({ outcome: { type: "failed", failure: { code } }, policy: "closed" });
  });

  it.each(FAILURES)("executes as if the hook returned nothing on %s under open", async (code, outcome) => {
    const { run } = setup({ points: ["tool.call"], policy: { "tool.call": "open" }, respond: outcome });
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toEqual({ type: "execute", args: { path: "/tmp/x" }, rewritten: false });
    expect(records[0]).toMatchObject({ outcome: { type: "failed", failure: { code } }, policy: "open" });
  });

  it("fails an event over the size limit as event_too_large without calling the sandbox", async () => {
    const closed = setup({ points: ["tool.call"], options: { limits: { maxEventChars: 1_024 } } });
    const big = toolCallEvent({ blob: "x".repeat(2_000) });
    expect((await closed.run.dispatch("tool.call", big)).decision).toMatchObject({
      type: "block",
      reason: "event_too_large",
    });
    expect(closed.executor.seen).toHaveLength(0);
    const open = setup({
      points: ["tool.call"],
      policy: { "tool.call": "open" },
      options: { limits: { maxEventChars: 1_024 } },
    });
    expect((await open.run.dispatch("tool.call", big)).decision).toMatchObject({ type: "execute" });
  });

  it("keeps later hooks running after a failure under open", async () => {
    const { run } = setup({
      points: ["tool.call"],
      policy: { "tool.call": "open" },
      respond: () => sandboxFailed("timeout"),
      last: [{ toolCall: () => ({ type: "block", reason: "platform" }) }],
    });
    expect((await run.dispatch("tool.call", toolCallEvent())).decision).toMatchObject({
      type: "block",
      reason: "platform",
    });
  });
});

describe("safe decisions per point", () => {
  const events: { [P in HookPoint]?: HookEvent<P> } = {
    "run.start": { input: [] },
    "input.inbound": { source: "user", message: { role: "user", content: "x" } },
    "context.prepare": { messages: [], scope: "durable" },
    "tools.prepare": { tools: [] },
    "model.request": { turn: 0, model: "m", settings: {}, messageCount: 0 },
    "model.response": {
      message: { role: "assistant", content: "" },
      usage: { inputTokens: 0, outputTokens: 0 },
      finishReason: "stop",
      hasToolCalls: false,
    },
    "tool.invalid": { call: { id: "1", name: "x", args: {} }, reason: "badArgs", available: [] },
    "tool.result": { call: { id: "1", name: "x", args: {} }, executed: true, result: { content: "", isError: false } },
    "turn.end": { turn: 0, message: { role: "assistant", content: "" }, toolResults: [] },
    "output.validate": { output: "" },
  };

  it.each(Object.entries(events))("turns a failure at %s into its safe decision under closed", async (point, event) => {
    const p = point as HookPoint;
    const { run } = setup({ points: [p], policy: { [p]: "closed" }, respond: () => sandboxFailed("memory_limit") });
    const { decision } = await run.dispatch(p, event as HookEvent<HookPoint>);
    const by = { hookId: "tenant:acme@v3", source: "tenant", failure: "memory_limit" };
    expect(decision).toEqual(
      p === "input.inbound"
        ? { type: "drop", reason: "memory_limit", by }
        : { type: "stop", reason: "memory_limit", by },
    );
  });

  it("fails run.start and input.inbound closed and context.prepare open by default", async () => {
    const { run } = setup({
      points: ["run.start", "input.inbound", "context.prepare"],
      respond: () => sandboxFailed("timeout"),
    });
    expect((await run.dispatch("run.start", { input: [] })).decision.type).toBe("stop");
    expect(
      (await run.dispatch("input.inbound", { source: "user", message: { role: "user", content: "x" } })).decision.type,
    ).toBe("drop");
    expect((await run.dispatch("context.prepare", { messages: [], scope: "durable" })).decision.type).toBe("messages");
  });
});

describe("platform floor", () => {
  it("raises a tenant's open tool.call to closed", async () => {
    const { run, events } = setup({
      points: ["tool.call"],
      policy: { "tool.call": "open" },
      respond: () => sandboxFailed("timeout"),
      options: { floor: { "tool.call": "closed" } },
    });
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toMatchObject({ type: "block", reason: "timeout" });
    expect(records[0]?.policy).toBe("closed");
    expect(events[0]).toMatchObject({ type: "hook.called", record: { policy: "closed" } });
  });

  it("never opens what the tenant closed", async () => {
    const { run } = setup({
      points: ["turn.end"],
      policy: { "turn.end": "closed" },
      respond: () => sandboxFailed("timeout"),
      options: { floor: { "turn.end": "open" } },
    });
    expect(
      (await run.dispatch("turn.end", { turn: 0, message: { role: "assistant", content: "" }, toolResults: [] }))
        .decision.type,
    ).toBe("stop");
  });

  it("applies a per-tenant floor function", async () => {
    const { dispatcher } = setup({
      respond: () => sandboxFailed("timeout"),
      options: { floor: (tenant) => (tenant === "strict" ? { "tool.call": "closed" } : undefined) },
    });
    const strict = { ...bundleOf(["tool.call"]), tenantId: TenantId.parse("strict") };
    const lax = bundleOf(["tool.call"]);
    const open = { "tool.call": "open" } as const;
    const strictRun = dispatcher.openRun({ tenantId: strict.tenantId, runId: RUN, bundle: strict, policy: open });
    const laxRun = dispatcher.openRun({ tenantId: lax.tenantId, runId: RUN, bundle: lax, policy: open });
    expect((await strictRun.dispatch("tool.call", toolCallEvent())).decision.type).toBe("block");
    expect((await laxRun.dispatch("tool.call", toolCallEvent())).decision.type).toBe("execute");
  });

  it("does not apply to platform hooks", async () => {
    const { dispatcher } = setup({ options: { floor: { "tool.call": "closed" } } });
    dispatcher.registerPlatformHooks({
      id: "platform:flaky",
      position: "first",
      policy: { "tool.call": "open" },
      hooks: {
        toolCall: () => {
          throw new Error("platform bug");
        },
      },
    });
    const run = dispatcher.openRun({ tenantId: bundleOf([]).tenantId, runId: RUN });
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision.type).toBe("execute");
    expect(records[0]?.outcome).toEqual({ type: "failed", failure: { code: "threw", message: "platform bug" } });
  });
});

describe("platform hook failures", () => {
  it("validates a platform hook's result with the point's schema", async () => {
    const { run } = setup({
      first: [{ toolCall: () => ({ type: "block", reason: "" }) as never }],
    });
    const { decision, records } = await run.dispatch("tool.call", toolCallEvent());
    expect(decision).toMatchObject({
      type: "block",
      reason: "invalid_result",
      by: { hookId: "first:0", failure: "invalid_result" },
    });
    expect(records[0]?.outcome.type === "failed" && records[0].outcome.failure.issues?.[0]?.path).toEqual(["reason"]);
  });

  it("records an async rejection as threw", async () => {
    const { run } = setup({ first: [{ turnEnd: async () => Promise.reject(new Error("nope")) }] });
    const { records } = await run.dispatch("turn.end", {
      turn: 0,
      message: { role: "assistant", content: "" },
      toolResults: [],
    });
    expect(records[0]?.outcome).toEqual({ type: "failed", failure: { code: "threw", message: "nope" } });
  });
});
