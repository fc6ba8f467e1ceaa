import { SpanStatusCode, trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxResult } from "../../src/protocol/index.js";
import { sandboxFailed, toolCallEvent } from "../dispatch/helpers.js";
import { setup } from "../dispatch/setup.js";

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
beforeAll(() => {
  trace.setGlobalTracerProvider(provider);
});
afterAll(async () => {
  trace.disable();
  await provider.shutdown();
});

describe("spans of a hostile tenant", () => {
  it("marks failed calls, the quarantine a strike started, worker deaths and calls that never ran", async () => {
    exporter.reset();
    const crashed: SandboxResult = {
      type: "failed",
      failure: { code: "sandbox_crashed", message: "the worker died" },
      cpuMs: 1,
      runMs: 1,
    };
    let calls = 0;
    const { run } = setup({
      points: ["tool.call"],
      respond: () => (++calls === 1 ? crashed : sandboxFailed("timeout", 50)),
      options: { quarantine: { failures: 3 }, budgets: { turnMs: 10_000, runMs: 10_000 } },
    });
    run.beginTurn(1);
    for (let i = 0; i < 5; i++) await run.dispatch("tool.call", toolCallEvent());
    await run.dispatch("run.end", { stopReason: "completed", turns: 1, usage: { inputTokens: 0, outputTokens: 0 } });
    const hooks = exporter.getFinishedSpans().filter((s) => s.name === "isohook.hook");
    expect(hooks.map((h) => h.attributes["error.type"])).toEqual([
      "sandbox_crashed",
      "timeout",
      "timeout",
      "quarantined",
      "quarantined",
    ]);
    expect(hooks.every((h) => h.status.code === SpanStatusCode.ERROR && h.status.message === undefined)).toBe(true);
    expect(hooks[0]?.events.map((e) => [e.name, e.attributes])).toEqual([
      ["isohook.worker.died", { "isohook.failure.bystander": false }],
    ]);
    expect(hooks.map((h) => h.events.map((e) => e.name))).toEqual([
      ["isohook.worker.died"],
      [],
      ["isohook.quarantine.entered"],
      [],
      [],
    ]);
    expect(hooks[2]?.events[0]?.attributes).toEqual({
      "error.type": "timeout",
      "isohook.quarantine.strike": 1,
      "isohook.quarantine.cooldown_ms": 30_000,
    });
    expect(hooks.map((h) => h.attributes["isohook.hook.reach"])).toEqual([
      undefined,
      undefined,
      undefined,
      "refused",
      "refused",
    ]);
  });

  it("says which calls the budget denied", async () => {
    exporter.reset();
    const { run } = setup({
      points: ["tool.call"],
      respond: () => sandboxFailed("threw", 60),
      options: { budgets: { turnMs: 100, runMs: 10_000 } },
    });
    run.beginTurn(1);
    for (let i = 0; i < 3; i++) await run.dispatch("tool.call", toolCallEvent());
    const hooks = exporter.getFinishedSpans().filter((s) => s.name === "isohook.hook");
    expect(hooks.map((h) => [h.attributes["error.type"], h.attributes["isohook.hook.reach"]])).toEqual([
      ["threw", undefined],
      ["threw", undefined],
      ["timeout", "budget"],
    ]);
  });
});
