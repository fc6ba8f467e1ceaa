import { describe, expect, it } from "vitest";
import { HOOK_POINT_NAMES, HOOK_POINTS, HookContext } from "../../src/protocol/index.js";
import { call, EVENTS, usage, user } from "./samples.js";

describe.each(HOOK_POINT_NAMES)("%s event schema", (point) => {
  const schema = HOOK_POINTS[point].event;

  it("parses the documented event", () => {
    expect(schema.parse(EVENTS[point])).toEqual(EVENTS[point]);
  });

  it("rejects an extra key and a missing field", () => {
    expect(schema.safeParse({ ...EVENTS[point], extra: 1 }).success).toBe(false);
    const [first] = Object.keys(EVENTS[point]);
    const { [first ?? ""]: _, ...missing } = EVENTS[point];
    expect(schema.safeParse(missing).success).toBe(false);
  });
});

describe("event schemas", () => {
  it.each([
    ["input.inbound", { source: "admin", message: user }],
    ["context.prepare", { messages: [], scope: "forever" }],
    ["model.request", { turn: -1, model: "m", settings: {}, messageCount: 0 }],
    ["model.request", { turn: 0, model: "m", settings: { temperature: 9 }, messageCount: 0 }],
    ["model.response", { message: user, usage, finishReason: "stop", hasToolCalls: false }],
    [
      "model.response",
      { message: { role: "assistant", content: "" }, usage, finishReason: "done", hasToolCalls: false },
    ],
    ["tool.invalid", { call, reason: "because", available: [] }],
    ["tool.call", { call, batch: { index: 0, size: 0 } }],
    ["tool.call", { call: { ...call, args: [] }, batch: { index: 0, size: 1 } }],
    ["tool.call", { call: { ...call, name: "rm -rf" }, batch: { index: 0, size: 1 } }],
    ["tool.result", { call, executed: true, result: { content: "x".repeat(60_001), isError: false } }],
    ["run.end", { stopReason: "bored", turns: 0, usage }],
  ] as const)("%s rejects %j", (point, event) => {
    expect(HOOK_POINTS[point].event.safeParse(event).success).toBe(false);
  });

  it("parses a full ctx and rejects a ctx with an unsafe tenant id", () => {
    const ctx = {
      tenantId: "acme-1",
      runId: "run-1",
      turn: 0,
      hookId: "tenant:acme-1@3",
      bundle: { version: 3, hash: `sha256-${"a".repeat(64)}` },
      config: { threshold: 2 },
      state: { seen: [1, 2] },
    };
    expect(HookContext.parse(ctx)).toEqual(ctx);
    expect(HookContext.safeParse({ ...ctx, tenantId: "../etc" }).success).toBe(false);
    expect(HookContext.safeParse({ ...ctx, bundle: { version: 3, hash: "md5-x" } }).success).toBe(false);
  });
});
