import { ProxyTracer, trace } from "@opentelemetry/api";
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it, vi } from "vitest";
import { HookMetrics } from "../../src/telemetry/hook-metrics.js";
import { RunTrace } from "../../src/telemetry/run-trace.js";
import { returned, toolCallEvent } from "../dispatch/helpers.js";
import { setup } from "../dispatch/setup.js";

/** One run of 3 turns, 10 tool calls a turn, through a fake sandbox. */
async function run30Calls(): Promise<void> {
  const { run, executor } = setup({ points: ["tool.call", "tool.result"], respond: () => returned(undefined) });
  for (let turn = 1; turn <= 3; turn++) {
    run.beginTurn(turn);
    for (let i = 0; i < 10; i++) await run.dispatch("tool.call", toolCallEvent());
  }
  await run.dispatch("run.end", { stopReason: "completed", turns: 3, usage: { inputTokens: 1, outputTokens: 1 } });
  expect(executor.seen).toHaveLength(30);
}

afterEach(() => {
  vi.restoreAllMocks();
  trace.disable();
});

describe("without an OpenTelemetry SDK", () => {
  it("starts no span, builds no attributes and records no metric", async () => {
    const startSpan = vi.spyOn(ProxyTracer.prototype, "startSpan");
    const hookSpan = vi.spyOn(RunTrace.prototype, "hookCalled");
    const record = vi.spyOn(HookMetrics.prototype, "record");
    await run30Calls();
    expect(startSpan).not.toHaveBeenCalled();
    expect(hookSpan).not.toHaveBeenCalled();
    expect(record).not.toHaveBeenCalled();
  });

  it("starts only the run's span when the platform's sampler drops the run, and checks it records", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({
      sampler: new AlwaysOffSampler(),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    trace.setGlobalTracerProvider(provider);
    // The provider hands out one tracer per scope: the one isohook's dispatcher looks up.
    const startSpan = vi.spyOn(provider.getTracer("isohook"), "startSpan");
    const hookSpan = vi.spyOn(RunTrace.prototype, "hookCalled");
    await run30Calls();
    expect(startSpan).toHaveBeenCalledTimes(1);
    expect(startSpan.mock.calls[0]?.[0]).toBe("invoke_agent");
    expect(startSpan.mock.results[0]?.value.isRecording()).toBe(false);
    expect(hookSpan).not.toHaveBeenCalled();
    expect(exporter.getFinishedSpans()).toEqual([]);
    await provider.shutdown();
  });

  it("traces every call once a provider that samples is registered (the same run, for contrast)", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    trace.setGlobalTracerProvider(provider);
    await run30Calls();
    const names = exporter.getFinishedSpans().map((s) => s.name);
    expect(names.filter((n) => n === "isohook.hook")).toHaveLength(30);
    expect(names.filter((n) => n === "isohook.turn")).toHaveLength(3);
    expect(names.filter((n) => n === "invoke_agent")).toHaveLength(1);
    await provider.shutdown();
  });
});
