import type { HookPoint } from "../../src/protocol/index.js";

/** Valid values shared by the protocol tests. */
export const call = { id: "call-1", name: "shell", args: { command: "ls" } };
export const assistant = { role: "assistant", content: "done" };
export const user = { role: "user", content: "hi" };
export const usage = { inputTokens: 10, outputTokens: 5 };

/** One valid event per hook point (docs/architecture.md, "Hook points, events and stacking", events). */
export const EVENTS: Record<HookPoint, Record<string, unknown>> = {
  "run.start": { input: [{ role: "system", content: "be brief" }, user] },
  "input.inbound": { source: "steering", from: "operator", message: user },
  "context.prepare": { messages: [user, assistant], scope: "request" },
  "tools.prepare": { tools: [{ name: "shell", description: "runs a command", parameters: { type: "object" } }] },
  "model.request": { turn: 0, model: "gpt-x", settings: { temperature: 0.2, toolChoice: "auto" }, messageCount: 2 },
  "model.stream": { turn: 1, kind: "toolArgs", delta: '"ls"}', aggregated: '{"command":"ls"}', callId: "call-1" },
  "model.response": {
    message: { role: "assistant", content: "", toolCalls: [call] },
    usage,
    finishReason: "toolCalls",
    hasToolCalls: true,
  },
  "tool.invalid": { call, reason: "unknownTool", available: ["read", "write"] },
  "tool.call": { call, batch: { index: 0, size: 1 } },
  "tool.result": { call, executed: true, result: { content: "ok", isError: false, details: { exit: 0 } } },
  "turn.end": {
    turn: 1,
    message: assistant,
    toolResults: [{ role: "tool", toolCallId: "call-1", name: "shell", content: "ok", isError: false }],
  },
  "output.validate": { output: "The answer is 42." },
  "run.end": { stopReason: "completed", turns: 2, usage },
};

const stop = { type: "stop", reason: "policy says no" };

/**
 * Every documented result of every hook point (docs/architecture.md, "Hook points, events and stacking", results), in
 * each optional shape.
 */
export const RESULTS: Record<HookPoint, Record<string, unknown>[]> = {
  "run.start": [{ type: "rewrite", input: [user] }, { type: "rewrite", input: [] }, stop],
  "input.inbound": [{ type: "rewrite", message: user }, { type: "drop", reason: "spam" }, stop],
  "context.prepare": [{ type: "replace", messages: [user, assistant] }],
  "tools.prepare": [
    { type: "restrict", allow: ["read", "web.search", "a_b-c"] },
    { type: "restrict", allow: [] },
  ],
  "model.request": [
    { type: "patch" },
    {
      type: "patch",
      model: "gpt-y",
      temperature: 0,
      maxTokens: 256,
      toolChoice: { name: "read" },
      activeTools: ["read"],
      system: "Answer in French.",
    },
    { type: "patch", toolChoice: "none" },
    { type: "respond", message: assistant },
    stop,
  ],
  "model.stream": [stop],
  "model.response": [
    { type: "replace", message: { role: "assistant", content: "edited", toolCalls: [call] } },
    { type: "retry" },
    { type: "retry", feedback: "use a tool" },
    stop,
  ],
  "tool.invalid": [
    { type: "fail" },
    { type: "retry", feedback: "the tool is called read" },
    { type: "repair", name: "read" },
    { type: "repair", name: "read", args: { path: "a" } },
    { type: "skip", reason: "not needed" },
    stop,
  ],
  "tool.call": [
    { type: "rewrite", args: { command: "ls -la" } },
    { type: "block", reason: "destructive" },
    { type: "block", reason: "destructive", terminate: true },
    stop,
  ],
  "tool.result": [
    { type: "patch" },
    { type: "patch", content: "[REDACTED]", isError: false, details: [1, "two", null], terminate: false },
    stop,
  ],
  "turn.end": [
    { type: "continue" },
    { type: "continue", message: "check your work" },
    { type: "end" },
    { type: "end", reason: "done" },
    stop,
  ],
  "output.validate": [
    { type: "accept" },
    { type: "retry", feedback: "cite a source" },
    { type: "fail", reason: "empty" },
  ],
  "run.end": [],
};
