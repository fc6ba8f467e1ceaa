import { describe, expect, it } from "vitest";
import { runAgentLoop } from "../../src/agent/index.js";
import { fakeHooks, TEST_HOOK } from "./fake-hooks.js";
import { call, recordingModel, shellTool } from "./helpers.js";

describe("runAgentLoop turn control", () => {
  it("asks the model once more with feedback when turn.end continues", async () => {
    let ends = 0;
    const hooks = fakeHooks({
      "turn.end": () =>
        ends++ === 0 ? { type: "continue", message: "add a summary", by: TEST_HOOK } : { type: "default" },
    });
    const model = recordingModel([{ text: "draft" }, { text: "draft. Summary: ok" }]);
    const result = await runAgentLoop({ hooks, model, input: "write" });
    expect(result).toMatchObject({ stopReason: "completed", output: "draft. Summary: ok", turns: 2 });
    expect(model.requests[1]?.messages.at(-1)).toEqual({ role: "user", content: "add a summary" });
  });

  it("ends the run gracefully when turn.end says end, after validating the output", async () => {
    const hooks = fakeHooks({ "turn.end": () => ({ type: "end", reason: "turn budget spent", by: TEST_HOOK }) });
    const model = recordingModel([{ toolCalls: [call("shell", { command: "a" })] }, { text: "never" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool()], input: "go" });
    expect(result).toMatchObject({
      stopReason: "completed",
      reason: "turn budget spent",
      turns: 1,
      decidedBy: TEST_HOOK,
    });
    expect(hooks.points().slice(-2)).toEqual(["output.validate", "run.end"]);
  });

  it("stops the run when turn.end says stop", async () => {
    const hooks = fakeHooks({ "turn.end": () => ({ type: "stop", reason: "halt", by: TEST_HOOK }) });
    const model = recordingModel([{ toolCalls: [call("shell", { command: "a" })] }, { text: "never" }]);
    const result = await runAgentLoop({ hooks, model, tools: [shellTool()], input: "go" });
    expect(result).toMatchObject({ stopReason: "stopped", reason: "halt", turns: 1 });
    expect(hooks.points()).not.toContain("output.validate");
  });

  it("retries a tool-free turn with feedback and counts the retry as a turn", async () => {
    let responses = 0;
    const hooks = fakeHooks({
      "model.response": (e) =>
        responses++ === 0
          ? { type: "retry", feedback: "answer in French", by: TEST_HOOK }
          : { type: "accept", message: e.message, replaced: false },
    });
    const model = recordingModel([{ text: "hello" }, { text: "bonjour" }]);
    const result = await runAgentLoop({ hooks, model, input: "greet" });
    expect(result).toMatchObject({ stopReason: "completed", output: "bonjour", turns: 2 });
    expect(result.transcript.map((m) => m.content)).toEqual(["greet", "hello", "answer in French", "bonjour"]);
    expect(hooks.points().filter((p) => p === "turn.end")).toHaveLength(1);
  });

  it("reaches maxTurns when retries use up the turn budget", async () => {
    const hooks = fakeHooks({ "model.response": () => ({ type: "retry", by: TEST_HOOK }) });
    const model = recordingModel([{ text: "a" }, { text: "b" }, { text: "c" }]);
    const result = await runAgentLoop({ hooks, model, input: "go", maxTurns: 3 });
    expect(result).toMatchObject({ stopReason: "maxTurns", turns: 3 });
    expect(result.transcript.map((m) => m.content)).toEqual(["go"]);
  });

  it("stops at 20 turns by default when the model never stops calling tools", async () => {
    const turns = Array.from({ length: 25 }, () => ({ toolCalls: [call("shell", { command: "again" })] }));
    const result = await runAgentLoop({
      hooks: fakeHooks(),
      model: recordingModel(turns),
      tools: [shellTool()],
      input: "go",
    });
    expect(result).toMatchObject({ stopReason: "maxTurns", turns: 20 });
    const last = result.transcript.at(-1);
    expect(last?.role).toBe("tool");
  });

  it("retries with feedback when output.validate asks, and fails when it fails", async () => {
    let validations = 0;
    const hooks = fakeHooks({
      "output.validate": () =>
        validations++ === 0
          ? { type: "retry", feedback: "cite a source", by: TEST_HOOK }
          : { type: "fail", reason: "still no source", by: TEST_HOOK },
    });
    const model = recordingModel([{ text: "claim" }, { text: "claim again" }]);
    const result = await runAgentLoop({ hooks, model, input: "go" });
    expect(result).toMatchObject({ stopReason: "failed", reason: "still no source", turns: 2 });
    expect(model.requests[1]?.messages.at(-1)).toEqual({ role: "user", content: "cite a source" });
  });

  it("fails an output retry that comes after a policy ended the run", async () => {
    const hooks = fakeHooks({
      "turn.end": () => ({ type: "end", by: TEST_HOOK }),
      "output.validate": () => ({ type: "retry", feedback: "more", by: TEST_HOOK }),
    });
    const result = await runAgentLoop({ hooks, model: recordingModel([{ text: "x" }, { text: "y" }]), input: "go" });
    expect(result.stopReason).toBe("failed");
    expect(result.reason).toMatch(/after the run was ended: more/);
    expect(result.turns).toBe(1);
  });

  it("lets run.start rewrite the input and stop the run", async () => {
    const rewritten = fakeHooks({
      "run.start": () => ({ type: "proceed", input: [{ role: "user", content: "rewritten" }], rewritten: true }),
    });
    const model = recordingModel([{ text: "ok" }]);
    await runAgentLoop({ hooks: rewritten, model, input: "original" });
    expect(model.requests[0]?.messages).toEqual([{ role: "user", content: "rewritten" }]);

    const stopping = fakeHooks({ "run.start": () => ({ type: "stop", reason: "tenant suspended", by: TEST_HOOK }) });
    const result = await runAgentLoop({ hooks: stopping, model: recordingModel([]), input: "x" });
    expect(result).toMatchObject({ stopReason: "stopped", reason: "tenant suspended", turns: 0 });
    expect(stopping.points()).toEqual(["run.start", "run.end"]);
  });

  it("drops inbound messages and stops when nothing was delivered", async () => {
    const hooks = fakeHooks({ "input.inbound": () => ({ type: "drop", reason: "spam", by: TEST_HOOK }) });
    const result = await runAgentLoop({ hooks, model: recordingModel([]), input: "buy now" });
    expect(result).toMatchObject({ stopReason: "stopped", turns: 0, decidedBy: TEST_HOOK });
    expect(result.transcript).toEqual([]);
  });

  it("delivers steering before a turn and follow-ups when the run would end", async () => {
    const steering = [[{ role: "user" as const, content: "steer" }]];
    const followUps = [[{ role: "user" as const, content: "one more thing" }]];
    const hooks = fakeHooks();
    const model = recordingModel([{ text: "a" }, { text: "b" }]);
    const result = await runAgentLoop({
      hooks,
      model,
      input: "start",
      steering: () => steering.shift() ?? [],
      followUp: () => followUps.shift() ?? [],
    });
    expect(result.transcript.map((m) => m.content)).toEqual(["start", "steer", "a", "one more thing", "b"]);
    const sources = hooks.calls
      .filter((c) => c.point === "input.inbound")
      .map((c) => (c.event as { source: string }).source);
    expect(sources).toEqual(["user", "steering", "followUp"]);
  });

  it("keeps durable context rewrites and sends request-only ones to the model alone", async () => {
    const hooks = fakeHooks({
      "context.prepare": (e) =>
        e.scope === "durable"
          ? { type: "messages", messages: [...e.messages, { role: "user", content: "durable note" }], replaced: true }
          : {
              type: "messages",
              messages: [{ role: "system", content: "request only" }, ...e.messages],
              replaced: true,
            },
    });
    const model = recordingModel([{ text: "ok" }]);
    const result = await runAgentLoop({ hooks, model, input: "go" });
    expect(model.requests[0]?.messages.map((m) => m.content)).toEqual(["request only", "go", "durable note"]);
    expect(result.transcript.map((m) => m.content)).toEqual(["go", "durable note", "ok"]);
  });

  it("applies a model.request patch and answers without the model on respond", async () => {
    const patched = fakeHooks({
      "model.request": () => ({
        type: "request",
        patch: { model: "small", temperature: 0, activeTools: ["read"], system: "be safe" },
        patched: true,
      }),
    });
    const model = recordingModel([{ text: "ok" }]);
    await runAgentLoop({ hooks: patched, model, tools: [shellTool()], input: "go", system: "base" });
    expect(model.requests[0]).toMatchObject({
      model: "small",
      settings: { temperature: 0 },
      tools: [],
      messages: [
        { role: "system", content: "base\n\nbe safe" },
        { role: "user", content: "go" },
      ],
    });

    const responding = fakeHooks({
      "model.request": () => ({
        type: "respond",
        message: { role: "assistant", content: "cached answer" },
        patch: {},
        by: TEST_HOOK,
      }),
    });
    const unused = recordingModel([]);
    const result = await runAgentLoop({ hooks: responding, model: unused, input: "go" });
    expect(result).toMatchObject({ stopReason: "completed", output: "cached answer", turns: 1 });
    expect(unused.requests).toHaveLength(0);
  });

  it("ends with error and the model's code when the script runs out", async () => {
    const result = await runAgentLoop({
      hooks: fakeHooks(),
      model: recordingModel([{ toolCalls: [call("shell", { command: "a" })] }]),
      tools: [shellTool()],
      input: "go",
    });
    expect(result.stopReason).toBe("error");
    expect(result.error?.code).toBe("script_exhausted");
    expect(result.reason).toMatch(/no turn 2/);
    expect(result.transcript.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
  });
});
