import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import { declaredTool, scriptedModel } from "../../src/agent/index.js";
import type { HookExecutor } from "../../src/protocol/index.js";
import { bundleFromEntry, createHookRuntime, fixedBundleSource, type RunAgentResult } from "../../src/runtime/index.js";

/** A run that pauses for approval ends every span it opened, and the resumed run's span links to it. */

const KEY = "a checkpoint key of 32 bytes....";
const shell = declaredTool({
  name: "shell",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  result: "$ {command}\nok",
});
const turns = [
  {
    toolCalls: [
      { name: "shell", args: { command: "npm test" } },
      { name: "shell", args: { command: "git push origin main" } },
    ],
  },
  { text: "Pushed." },
];

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
let executor: HookExecutor;
let paused: RunAgentResult;
let resumed: RunAgentResult;
let pausedSpans: ReadableSpan[];
let resumedSpans: ReadableSpan[];

beforeAll(async () => {
  trace.setGlobalTracerProvider(provider);
  executor = await createHookExecutor({ workers: 1, spareWorker: false, limits: { timeoutMs: 500 } });
  const bundle = await bundleFromEntry("hooks/ask-before-push", { tenantId: "acme", executor });
  const runtime = await createHookRuntime({
    executor,
    bundles: fixedBundleSource([bundle]),
    checkpointKey: KEY,
    limits: { timeoutMs: 500 },
    dispatch: { budgets: { turnMs: 10_000, runMs: 30_000 } },
  });
  paused = await runtime.runAgent({
    tenantId: "acme",
    input: "Test, then push.",
    tools: [shell],
    model: scriptedModel(turns),
  });
  pausedSpans = exporter.getFinishedSpans();
  exporter.reset();
  if (paused.checkpoint === undefined) throw new Error(`expected a pause, got ${paused.stopReason}`);
  resumed = await runtime.resumeAgent(paused.checkpoint, {
    tenantId: "acme",
    decisions: { call_1_2: { type: "approve" } },
    tools: [shell],
    model: scriptedModel(turns, { start: 1 }),
  });
  await runtime.close();
  resumedSpans = exporter.getFinishedSpans();
}, 60_000);

afterAll(async () => {
  await executor?.close();
  trace.disable();
  await provider.shutdown();
});

/** Spans whose parent is not among the finished spans: a parent that never ended. */
function orphans(spans: readonly ReadableSpan[]): string[] {
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  return spans
    .filter((s) => s.parentSpanContext !== undefined && !ids.has(s.parentSpanContext.spanId))
    .map((s) => s.name);
}

describe("the spans of a run that pauses for approval", () => {
  it("ends the run and its open turn at the pause, with the stop reason", () => {
    expect(paused.stopReason).toBe("approval");
    expect(orphans(pausedSpans)).toEqual([]);
    const [run, ...more] = pausedSpans.filter((s) => s.name === "invoke_agent");
    expect(more).toEqual([]);
    expect(run?.attributes).toMatchObject({ "isohook.run.stop_reason": "approval", "isohook.run.turns": 1 });
    expect(pausedSpans.filter((s) => s.name === "isohook.turn")).toHaveLength(1);
  });

  it("links the resumed run's span to the paused one, and ends all of its spans", () => {
    expect(resumed.stopReason).toBe("completed");
    expect(orphans(resumedSpans)).toEqual([]);
    const pausedRun = pausedSpans.find((s) => s.name === "invoke_agent");
    const [run] = resumedSpans.filter((s) => s.name === "invoke_agent");
    expect(run?.attributes).toMatchObject({ "isohook.run.stop_reason": "completed" });
    expect(run?.links.map((l) => l.context.spanId)).toEqual([pausedRun?.spanContext().spanId]);
    expect(run?.links[0]?.context.traceId).toBe(pausedRun?.spanContext().traceId);
  });
});
