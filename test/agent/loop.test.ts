import { describe, expect, it } from "vitest";
import { type AgentEvent, runAgentLoop } from "../../src/agent/index.js";
import { fakeHooks, TEST_HOOK } from "./fake-hooks.js";
import { call, readTool, recordingModel, shellTool } from "./helpers.js";

describe("runAgentLoop", () => {
  it("calls every hook point in order through a tool turn and a final answer", async () => {
    const hooks = fakeHooks();
    const ran: { command: string }[] = [];
    const model = recordingModel([{ toolCalls: [call("shell", { command: "ls" })] }, { text: "Done." }]);
    const result = await runAgentLoop({
      hooks,
      model,
      tools: [shellTool(ran)],
      input: "list files",
      system: "be brief",
    });
    expect(hooks.points()).toEqual([
      "run.start",
      "input.inbound",
      "context.prepare",
      "context.prepare",
      "tools.prepare",
      "model.request",
      "model.response",
      "tool.call",
      "tool.result",
      "turn.end",
      "context.prepare",
      "context.prepare",
      "tools.prepare",
      "model.request",
      "model.response",
      "turn.end",
      "output.validate",
      "run.end",
    ]);
    expect(result.stopReason).toBe("completed");
    expect(result.output).toBe("Done.");
    expect(result.turns).toBe(2);
    expect(ran).toEqual([{ command: "ls", cwd: undefined }]);
    expect(result.transcript.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"]);
    expect(result.transcript[3]).toMatchObject({
      role: "tool",
      toolCallId: "call_1_1",
      content: "ran ls",
      isError: false,
    });
    expect(hooks.calls.find((c) => c.point === "context.prepare")?.event).toMatchObject({ scope: "durable" });
    expect(hooks.calls.filter((c) => c.point === "model.request").map((c) => c.turn)).toEqual([1, 2]);
    expect(hooks.calls.at(-1)?.event).toEqual({
      stopReason: "completed",
      turns: 2,
      usage: result.usage,
    });
  });

  it("gives a blocked call the error result `blocked: <reason>` and goes on", async () => {
    const ran: { command: string }[] = [];
    const hooks = fakeHooks({
      "tool.call": (e) =>
        e.call.args.command === "rm -rf /"
          ? { type: "block", reason: "destructive", terminate: false, args: e.call.args, by: TEST_HOOK }
          : { type: "execute", args: e.call.args, rewritten: false },
    });
    const model = recordingModel([
      { toolCalls: [call("shell", { command: "rm -rf /" }), call("shell", { command: "ls" })] },
      { text: "ok" },
    ]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool(ran)], input: "clean" });
    expect(ran.map((r) => r.command)).toEqual(["ls"]);
    expect(result.transcript[2]).toMatchObject({ role: "tool", content: "blocked: destructive", isError: true });
    expect(result.transcript[3]).toMatchObject({ role: "tool", content: "ran ls", isError: false });
    expect(result.stopReason).toBe("completed");
    const toolResult = hooks.calls.find((c) => c.point === "tool.result");
    expect(toolResult?.event).toMatchObject({ executed: false, result: { content: "blocked: destructive" } });
  });

  it("ends the run after the batch when a block asks to terminate", async () => {
    const ran: { command: string }[] = [];
    const hooks = fakeHooks({
      "tool.call": (e) =>
        e.batch.index === 0
          ? { type: "block", reason: "enough", terminate: true, args: e.call.args, by: TEST_HOOK }
          : { type: "execute", args: e.call.args, rewritten: false },
    });
    const model = recordingModel([
      { toolCalls: [call("shell", { command: "a" }), call("shell", { command: "b" })] },
      { text: "never" },
    ]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool(ran)], input: "go" });
    expect(ran.map((r) => r.command)).toEqual(["b"]);
    expect(result).toMatchObject({ stopReason: "stopped", reason: "terminated: enough", turns: 1 });
    expect(result.decidedBy).toEqual(TEST_HOOK);
    expect(hooks.points()).not.toContain("turn.end");
    expect(result.transcript.filter((m) => m.role === "tool")).toHaveLength(2);
  });

  it("ends the run after the batch when a tool.result patch asks to terminate", async () => {
    const hooks = fakeHooks({
      "tool.result": (e) => ({ type: "result", result: e.result, terminate: true, patched: true }),
    });
    const model = recordingModel([{ toolCalls: [call("shell", { command: "a" })] }, { text: "never" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool()], input: "go" });
    expect(result.stopReason).toBe("stopped");
    expect(result.reason).toBe("terminated: terminated after `shell`");
    expect(result.turns).toBe(1);
  });

  it("cancels the rest of the batch when tool.call stops the run", async () => {
    const ran: { command: string }[] = [];
    const hooks = fakeHooks({
      "tool.call": (e) =>
        e.batch.index === 1
          ? { type: "stop", reason: "policy says stop", by: TEST_HOOK }
          : { type: "execute", args: e.call.args, rewritten: false },
    });
    const model = recordingModel([
      {
        toolCalls: [call("shell", { command: "a" }), call("shell", { command: "b" }), call("shell", { command: "c" })],
      },
    ]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool(ran)], input: "go" });
    expect(ran.map((r) => r.command)).toEqual(["a"]);
    expect(result).toMatchObject({ stopReason: "stopped", reason: "policy says stop" });
    const tools = result.transcript.filter((m) => m.role === "tool");
    expect(tools.map((m) => m.content)).toEqual([
      "ran a",
      "cancelled: the run was stopped (policy says stop)",
      "cancelled: the run was stopped (policy says stop)",
    ]);
    expect(hooks.points().at(-1)).toBe("run.end");
  });

  it("runs the tool with rewritten args and hands dispatch the tool's schema check", async () => {
    const ran: { command: string; cwd?: string | undefined }[] = [];
    const checks: (string | undefined)[] = [];
    const hooks = fakeHooks({
      "tool.call": (e, options) => {
        checks.push(options.validateArgs?.({ command: 42 }), options.validateArgs?.({ command: "ls", cwd: "/w" }));
        return { type: "execute", args: { ...e.call.args, cwd: "/workspace" }, rewritten: true };
      },
    });
    const model = recordingModel([{ toolCalls: [call("shell", { command: "ls", cwd: "/" })] }, { text: "ok" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool(ran)], input: "go" });
    expect(ran).toEqual([{ command: "ls", cwd: "/workspace" }]);
    expect(checks[0]).toMatch(/command/);
    expect(checks[1]).toBeUndefined();
    const toolResult = hooks.calls.find((c) => c.point === "tool.result");
    expect(toolResult?.event).toMatchObject({ call: { args: { command: "ls", cwd: "/workspace" } }, executed: true });
    expect(result.transcript[2]).toMatchObject({ content: "ran ls in /workspace" });
  });

  it("keeps the patched tool result, not the raw one", async () => {
    const hooks = fakeHooks({
      "tool.result": (e) => ({
        type: "result",
        result: { ...e.result, content: e.result.content.replace(/sk-\w+/g, "[redacted]") },
        terminate: false,
        patched: true,
      }),
    });
    const model = recordingModel([{ toolCalls: [call("read", { path: ".env" })] }, { text: "ok" }]);
    const result = await runAgentLoop({ hooks, model, tools: [readTool("KEY=sk-abc123")], input: "go" });
    expect(result.transcript[2]).toMatchObject({ content: "KEY=[redacted]" });
    expect(JSON.stringify(model.requests[1]?.messages)).not.toContain("sk-abc123");
  });

  it("turns a throwing tool into an error result and goes on", async () => {
    const hooks = fakeHooks();
    const broken = { ...shellTool(), execute: async () => Promise.reject(new Error("disk on fire")) };
    const model = recordingModel([{ toolCalls: [call("shell", { command: "x" })] }, { text: "ok" }]);
    const result = await runAgentLoop({ hooks, model, tools: [broken], input: "go" });
    expect(result.transcript[2]).toMatchObject({ content: "error: disk on fire", isError: true });
    expect(result.stopReason).toBe("completed");
  });

  it("reports each decision that a hook made, with its records", async () => {
    const events: AgentEvent[] = [];
    const hooks = fakeHooks({ "turn.end": () => ({ type: "end", reason: "budget", by: TEST_HOOK }) });
    const model = recordingModel([{ text: "hi" }]);
    await runAgentLoop({ hooks, model, input: "go", onEvent: (e) => events.push(e) });
    const decided = events.filter((e) => e.type === "hooks.decided");
    expect(decided).toHaveLength(1);
    expect(decided[0]).toMatchObject({ point: "turn.end", turn: 1, decision: { type: "end", reason: "budget" } });
    expect(events.at(-1)).toMatchObject({ type: "run.finished", stopReason: "completed", reason: "budget" });
  });
});
