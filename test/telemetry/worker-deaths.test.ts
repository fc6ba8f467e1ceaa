import { type Attributes, metrics, trace } from "@opentelemetry/api";
import {
  AggregationTemporality,
  type DataPoint,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startProcessExecutor } from "../../sandbox/supervisor/create-executor.js";
import type { ProcessExecutor } from "../../sandbox/supervisor/process-executor.js";
import { createDispatcher, type Dispatcher } from "../../src/dispatch/index.js";
import { RunId } from "../../src/protocol/index.js";
import { createHookRuntime, type HookRuntime } from "../../src/runtime/index.js";
import { bundleOf, TENANT, toolCallEvent } from "../dispatch/helpers.js";
import { STAND_IN_WORKER, standInCall } from "../sandbox/process/helpers/processes.js";

const spans = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const exported = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: exported, exportIntervalMillis: 3_600_000 });
const meter = new MeterProvider({ readers: [reader] });

/** The stand-in worker hangs on this event until the host kills it at its deadline (5 × 30 ms + grace). */
const HANG = { op: "hang" };

let executor: ProcessExecutor;
/** Who hears the executor's supervisor: set per test (the executor is made before either). */
let listener: { dispatcher?: Dispatcher; runtime?: HookRuntime } = {};

beforeAll(async () => {
  trace.setGlobalTracerProvider(tracer);
  metrics.setGlobalMeterProvider(meter);
  executor = await startProcessExecutor(
    {
      workers: 1,
      spareWorker: false,
      limits: { timeoutMs: 30 },
      onEvent: (event) => {
        listener.dispatcher?.observeSandbox(event);
        listener.runtime?.observeSandbox(event);
      },
    },
    { workerEntry: STAND_IN_WORKER },
  );
});
afterAll(async () => {
  await executor?.close();
  trace.disable();
  metrics.disable();
  await tracer.shutdown();
  await meter.shutdown();
});

async function restarts(attributes: Attributes): Promise<number | undefined> {
  exported.reset();
  await reader.forceFlush();
  const all = exported.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
  const found = all.find((m) => m.descriptor.name === "isohook.worker.restarts");
  const matching = ((found?.dataPoints ?? []) as DataPoint<number>[]).filter((p) =>
    Object.entries(attributes).every(([key, value]) => p.attributes[key] === value),
  );
  return matching.length === 0 ? undefined : matching.reduce((sum, p) => sum + p.value, 0);
}

describe("worker deaths in telemetry", () => {
  it("marks the span of a call whose worker the host killed at its deadline, and not the calls after it", async () => {
    spans.reset();
    // The kill takes ~300 ms of the turn's 100: the next call of the turn is refused (`timeout`, never run).
    const dispatcher = createDispatcher({
      executor,
      limits: { timeoutMs: 30 },
      budgets: { turnMs: 100, runMs: 60_000 },
    });
    listener = { dispatcher };
    const run = dispatcher.openRun({
      tenantId: TENANT,
      runId: RunId.parse("killed-1"),
      bundle: bundleOf(["tool.call"]),
    });
    run.beginTurn(0);
    const killed = await run.dispatch("tool.call", { ...toolCallEvent(), ...HANG } as never);
    expect(killed.records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    const refused = await run.dispatch("tool.call", toolCallEvent());
    expect(refused.records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    // The next turn reaches a fresh worker, which answers (not a guest reply: the stand-in's own JSON).
    run.beginTurn(1);
    const after = await run.dispatch("tool.call", toolCallEvent());
    expect(after.records[0]?.outcome).toMatchObject({ type: "failed", failure: { code: "invalid_result" } });
    const hooks = spans.getFinishedSpans().filter((s) => s.name === "isohook.hook");
    expect(hooks.map((h) => h.attributes["isohook.hook.reach"])).toEqual([undefined, "budget", undefined]);
    expect(hooks.map((h) => h.events.map((e) => [e.name, e.attributes]))).toEqual([
      [["isohook.worker.died", { "isohook.failure.bystander": false, "isohook.worker.exit_reason": "deadline" }]],
      [],
      [],
    ]);
    listener = {};
  });

  it("counts the restarts of an executor passed ready-made once its events reach the runtime", async () => {
    const runtime = await createHookRuntime({ executor });
    listener = { runtime };
    const before = (await restarts({ "isohook.worker.exit_reason": "deadline" })) ?? 0;
    const killed = await executor.execute(...standInCall(TENANT, HANG, 30));
    expect(killed).toMatchObject({ type: "failed", failure: { code: "timeout" } });
    expect(await restarts({ "isohook.worker.exit_reason": "deadline" })).toBe(before + 1);
    await runtime.close();
    listener = {};
    // The executor was the platform's: the runtime left it running.
    expect((await executor.execute(...standInCall(TENANT, {}))).type).toBe("replied");
  });
});
