import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type Model, runAgentLoop } from "../../src/agent/index.js";
import { fakeHooks, TEST_HOOK } from "./fake-hooks.js";
import { call, readTool, recordingModel, shellTool } from "./helpers.js";

describe("runAgentLoop tool calls", () => {
  it("fails an unknown tool with an error result naming the available ones by default", async () => {
    const hooks = fakeHooks();
    const model = recordingModel([{ toolCalls: [call("delete_db", {})] }, { text: "ok" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool(), readTool()], input: "go" });
    expect(hooks.calls.find((c) => c.point === "tool.invalid")?.event).toMatchObject({
      reason: "unknownTool",
      available: ["shell", "read"],
    });
    expect(result.transcript[2]).toMatchObject({
      content: "invalid tool call: there is no tool `delete_db`; available: shell, read",
      isError: true,
    });
    expect(hooks.points()).not.toContain("tool.call");
    expect(result.stopReason).toBe("completed");
  });

  it("treats a tool outside the turn's active list as notAllowed", async () => {
    const hooks = fakeHooks({
      "tools.prepare": (e) => ({ type: "tools", tools: e.tools.filter((t) => t.name === "read"), restricted: true }),
    });
    const model = recordingModel([{ toolCalls: [call("shell", { command: "ls" })] }, { text: "ok" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool(), readTool()], input: "go" });
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(["read"]);
    expect(hooks.calls.find((c) => c.point === "tool.invalid")?.event).toMatchObject({ reason: "notAllowed" });
    expect(result.transcript[2]?.content).toMatch(/not allowed this turn/);
  });

  it("reports bad arguments as badArgs and passes the hook's retry feedback to the model", async () => {
    const hooks = fakeHooks({
      "tool.invalid": () => ({ type: "retry", feedback: "command must be a string", by: TEST_HOOK }),
    });
    const model = recordingModel([{ toolCalls: [call("shell", { command: 7 })] }, { text: "ok" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool()], input: "go" });
    expect(hooks.calls.find((c) => c.point === "tool.invalid")?.event).toMatchObject({ reason: "badArgs" });
    expect(result.transcript[2]).toMatchObject({ content: "command must be a string", isError: true });
  });

  it("runs a repaired call through tool.call and skips a skipped one", async () => {
    const ran: { command: string }[] = [];
    const hooks = fakeHooks({
      "tool.invalid": (e) =>
        e.call.name === "bash"
          ? { type: "repair", name: "shell", by: TEST_HOOK }
          : { type: "skip", reason: "not needed", by: TEST_HOOK },
    });
    const model = recordingModel([{ toolCalls: [call("bash", { command: "ls" }), call("nope", {})] }, { text: "ok" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool(ran)], input: "go" });
    expect(ran.map((r) => r.command)).toEqual(["ls"]);
    expect(hooks.calls.find((c) => c.point === "tool.call")?.event).toMatchObject({ call: { name: "shell" } });
    const tools = result.transcript.filter((m) => m.role === "tool");
    expect(tools).toMatchObject([
      { toolCallId: "call_1_1", name: "shell", content: "ran ls", isError: false },
      { toolCallId: "call_1_2", content: "skipped: not needed", isError: false },
    ]);
  });

  it("fails a repair that is still invalid without asking tool.invalid again", async () => {
    const hooks = fakeHooks({ "tool.invalid": () => ({ type: "repair", name: "ghost", by: TEST_HOOK }) });
    const model = recordingModel([{ toolCalls: [call("bash", {})] }, { text: "ok" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool()], input: "go" });
    expect(hooks.points().filter((p) => p === "tool.invalid")).toHaveLength(1);
    expect(result.transcript[2]?.content).toMatch(/after repair.*no tool `ghost`/);
  });

  it("runs parallel calls concurrently and keeps results in call order", async () => {
    let started = 0;
    let release: () => void = () => {};
    const bothStarted = new Promise<void>((resolve) => {
      release = resolve;
    });
    const slow = defineTool({
      name: "wait",
      description: "waits until both calls started",
      parameters: z.object({ id: z.string() }),
      async execute({ id }) {
        started += 1;
        if (started === 2) release();
        await bothStarted;
        return id === "first" ? "first done" : "second done";
      },
    });
    const hooks = fakeHooks();
    const model = recordingModel([
      { toolCalls: [call("wait", { id: "first" }), call("wait", { id: "second" })] },
      { text: "ok" },
    ]);
    const result = await runAgentLoop({ hooks, model, tools: [slow], input: "go", parallelToolCalls: true });
    expect(result.transcript.filter((m) => m.role === "tool").map((m) => m.content)).toEqual([
      "first done",
      "second done",
    ]);
    expect(hooks.points().slice(7, 11)).toEqual(["tool.call", "tool.call", "tool.result", "tool.result"]);
  });

  it("gives every tool call a result when the run is aborted mid-batch", async () => {
    const controller = new AbortController();
    const hanging = defineTool({
      name: "hang",
      description: "never finishes on its own",
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise(() => {
          // Ignores its signal on purpose: the loop must not wait for it.
          if (!signal.aborted) controller.abort(new Error("user cancelled"));
        }),
    });
    const hooks = fakeHooks();
    const model = recordingModel([{ toolCalls: [call("hang", {}), call("hang", {}), call("hang", {})] }]);
    const result = await runAgentLoop({ hooks, model, tools: [hanging], input: "go", signal: controller.signal });
    expect(result.stopReason).toBe("aborted");
    const assistant = result.transcript.find((m) => m.role === "assistant");
    const ids = assistant?.role === "assistant" ? (assistant.toolCalls ?? []).map((c) => c.id) : [];
    const results = result.transcript.filter((m) => m.role === "tool");
    expect(results.map((m) => m.role === "tool" && m.toolCallId)).toEqual(ids);
    expect(results.every((m) => m.role === "tool" && m.isError && m.content.startsWith("cancelled:"))).toBe(true);
    expect(hooks.points().at(-1)).toBe("run.end");
    expect(hooks.calls.at(-1)?.event).toMatchObject({ stopReason: "aborted" });
  });

  it("never lets an unchecked result reach the transcript when aborted during tool.result", async () => {
    const controller = new AbortController();
    const hooks = fakeHooks({
      "tool.result": () => {
        controller.abort();
        return new Promise(() => {});
      },
    });
    const model = recordingModel([{ toolCalls: [call("read", { path: ".env" })] }]);
    const pending = runAgentLoop({
      hooks,
      model,
      tools: [readTool("sk-secret")],
      input: "go",
      signal: controller.signal,
    });
    // The fake hangs; the loop must not wait for it once the signal aborted.
    const result = await Promise.race([pending, new Promise<"hung">((r) => setTimeout(() => r("hung"), 2_000))]);
    expect(result).not.toBe("hung");
    if (result === "hung") return;
    expect(result.stopReason).toBe("aborted");
    expect(JSON.stringify(result.transcript)).not.toContain("sk-secret");
    expect(result.transcript.at(-1)).toMatchObject({ role: "tool", isError: true });
  });

  it("aborts a model call in flight", async () => {
    const controller = new AbortController();
    const model: Model = {
      id: "slow",
      complete: (_request, signal) =>
        new Promise((_, reject) => {
          signal.addEventListener("abort", () => reject(signal.reason));
          controller.abort();
        }),
    };
    const result = await runAgentLoop({ hooks: fakeHooks(), model, input: "go", signal: controller.signal });
    expect(result).toMatchObject({ stopReason: "aborted", turns: 1 });
    expect(result.transcript.map((m) => m.role)).toEqual(["user"]);
  });
});
