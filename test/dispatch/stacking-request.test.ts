import { describe, expect, it } from "vitest";
import { returned } from "./helpers.js";
import { setup } from "./setup.js";

const user = (content: string) => ({ role: "user" as const, content });
const tenantBy = { hookId: "tenant:acme@v3", source: "tenant" };

describe("run.start stacking", () => {
  it("chains rewrites of the input", async () => {
    const { run, executor } = setup({
      points: ["run.start"],
      first: [{ runStart: (e) => ({ type: "rewrite", input: [...e.input, user("from platform")] }) }],
      respond: (seen) => returned({ type: "rewrite", input: [...(seen.event.input as []), user("from tenant")] }),
    });
    const { decision } = await run.dispatch("run.start", { input: [user("hi")] });
    expect(executor.seen[0]?.event.input).toEqual([user("hi"), user("from platform")]);
    expect(decision).toEqual({
      type: "proceed",
      input: [user("hi"), user("from platform"), user("from tenant")],
      rewritten: true,
    });
  });

  it("lets the first stop win", async () => {
    const { run } = setup({
      points: ["run.start"],
      respond: () => returned({ type: "stop", reason: "banned user" }),
      last: [{ runStart: () => ({ type: "stop", reason: "later" }) }],
    });
    expect((await run.dispatch("run.start", { input: [] })).decision).toEqual({
      type: "stop",
      reason: "banned user",
      by: tenantBy,
    });
  });
});

describe("input.inbound stacking", () => {
  it("chains rewrites and lets the first drop win", async () => {
    const { run, executor } = setup({
      points: ["input.inbound"],
      first: [{ inputInbound: () => ({ type: "rewrite", message: user("cleaned") }) }],
      respond: () => returned({ type: "drop", reason: "spam" }),
      last: [{ inputInbound: () => ({ type: "stop", reason: "later" }) }],
    });
    const { decision, records } = await run.dispatch("input.inbound", { source: "steering", message: user("raw") });
    expect(executor.seen[0]?.event.message).toEqual(user("cleaned"));
    expect(decision).toEqual({ type: "drop", reason: "spam", by: tenantBy });
    expect(records).toHaveLength(2);
  });

  it("delivers the message when no hook objects", async () => {
    const { run } = setup({ points: ["input.inbound"] });
    expect((await run.dispatch("input.inbound", { source: "user", message: user("x") })).decision).toEqual({
      type: "deliver",
      message: user("x"),
      rewritten: false,
    });
  });
});

describe("context.prepare stacking", () => {
  it("chains replaces", async () => {
    const { run } = setup({
      points: ["context.prepare"],
      respond: (seen) => returned({ type: "replace", messages: (seen.event.messages as unknown[]).slice(1) }),
      last: [{ contextPrepare: (e) => ({ type: "replace", messages: [...e.messages, user("reminder")] }) }],
    });
    const { decision } = await run.dispatch("context.prepare", {
      messages: [user("old"), user("new")],
      scope: "request",
    });
    expect(decision).toEqual({ type: "messages", messages: [user("new"), user("reminder")], replaced: true });
  });
});

describe("tools.prepare stacking", () => {
  const tool = (name: string) => ({ name, description: name, parameters: { type: "object" } });

  it("intersects restricts and never adds or renames a tool", async () => {
    const { run, executor } = setup({
      points: ["tools.prepare"],
      first: [{ toolsPrepare: () => ({ type: "restrict", allow: ["read", "write", "shell"] }) }],
      respond: () => returned({ type: "restrict", allow: ["read", "shell", "deploy", "Shell"] }),
    });
    const { decision } = await run.dispatch("tools.prepare", { tools: [tool("read"), tool("write"), tool("grep")] });
    expect((executor.seen[0]?.event.tools as { name: string }[] | undefined)?.map((t) => t.name)).toEqual([
      "read",
      "write",
    ]);
    expect(decision).toEqual({ type: "tools", tools: [tool("read")], restricted: true });
  });

  it("keeps every tool when no hook restricts", async () => {
    const { run } = setup({ points: ["tools.prepare"] });
    expect((await run.dispatch("tools.prepare", { tools: [tool("a")] })).decision).toEqual({
      type: "tools",
      tools: [tool("a")],
      restricted: false,
    });
  });
});

describe("model.request stacking", () => {
  const event = { turn: 0, model: "small", settings: { temperature: 1 }, messageCount: 2 };

  it("merges patches: later scalars win, activeTools intersect, later hooks see the patched model", async () => {
    const { run, executor } = setup({
      points: ["model.request"],
      first: [{ modelRequest: () => ({ type: "patch", model: "big", maxTokens: 100, activeTools: ["a", "b", "c"] }) }],
      respond: () => returned({ type: "patch", temperature: 0, activeTools: ["c", "b", "z"], system: "be brief" }),
      last: [{ modelRequest: () => ({ type: "patch", maxTokens: 50 }) }],
    });
    const { decision } = await run.dispatch("model.request", event);
    expect(executor.seen[0]?.event).toMatchObject({ model: "big", settings: { temperature: 1, maxTokens: 100 } });
    expect(decision).toEqual({
      type: "request",
      patch: { model: "big", maxTokens: 50, temperature: 0, activeTools: ["c", "b"], system: "be brief" },
      patched: true,
    });
  });

  it("lets the first respond win and keeps earlier patches", async () => {
    const message = { role: "assistant" as const, content: "cached answer" };
    const { run } = setup({
      points: ["model.request"],
      first: [{ modelRequest: () => ({ type: "patch", model: "big" }) }],
      respond: () => returned({ type: "respond", message }),
      last: [{ modelRequest: () => ({ type: "stop", reason: "later" }) }],
    });
    expect((await run.dispatch("model.request", event)).decision).toEqual({
      type: "respond",
      message,
      patch: { model: "big" },
      by: tenantBy,
    });
  });
});

describe("model.response stacking", () => {
  const withTools = {
    message: { role: "assistant" as const, content: "", toolCalls: [{ id: "c1", name: "shell", args: {} }] },
    usage: { inputTokens: 1, outputTokens: 1 },
    finishReason: "toolCalls" as const,
    hasToolCalls: true,
  };

  it("chains replaces", async () => {
    const { run } = setup({
      points: ["model.response"],
      respond: () => returned({ type: "replace", message: { role: "assistant", content: "a" } }),
      last: [
        {
          modelResponse: (e) => ({ type: "replace", message: { role: "assistant", content: `${e.message.content}b` } }),
        },
      ],
    });
    expect((await run.dispatch("model.response", withTools)).decision).toEqual({
      type: "accept",
      message: { role: "assistant", content: "ab" },
      replaced: true,
    });
  });

  it("refuses retry on a turn with tool calls as invalid_result", async () => {
    const { run } = setup({
      points: ["model.response"],
      respond: () => returned({ type: "retry", feedback: "again" }),
    });
    const { decision, records } = await run.dispatch("model.response", withTools);
    expect(decision).toMatchObject({ type: "accept", replaced: false });
    expect(records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
  });

  it("allows retry once an earlier replace removed the tool calls, and the first retry wins", async () => {
    const { run } = setup({
      points: ["model.response"],
      first: [{ modelResponse: () => ({ type: "replace", message: { role: "assistant", content: "plain" } }) }],
      respond: () => returned({ type: "retry", feedback: "again" }),
      last: [{ modelResponse: () => ({ type: "stop", reason: "later" }) }],
    });
    expect((await run.dispatch("model.response", withTools)).decision).toEqual({
      type: "retry",
      feedback: "again",
      by: tenantBy,
    });
  });
});
