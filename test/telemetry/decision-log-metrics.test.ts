import { metrics } from "@opentelemetry/api";
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecisionLog } from "../../src/decisionlog/index.js";
import { createDispatcher } from "../../src/dispatch/index.js";
import { RunId, type TenantId } from "../../src/protocol/index.js";
import { MemoryBundleStore, StoreError } from "../../src/store/index.js";
import { METRIC } from "../../src/telemetry/index.js";
import { bundleOf, FakeExecutor, returned, TENANT, toolCallEvent } from "../dispatch/helpers.js";

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const provider = new MeterProvider({ readers: [reader] });

beforeAll(() => {
  metrics.setGlobalMeterProvider(provider);
});
afterAll(async () => {
  metrics.disable();
  await provider.shutdown();
});

async function dropped(): Promise<Record<string, unknown>> {
  exporter.reset();
  await reader.forceFlush();
  const all: MetricData[] = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
  const points = all.find((m) => m.descriptor.name === METRIC.decisionLogDropped)?.dataPoints ?? [];
  return Object.fromEntries(points.map((p) => [String(p.attributes["isohook.decisionlog.drop_reason"]), p.value]));
}

describe("the decision log's drop counter", () => {
  it("counts every dropped record by reason, as stats() does", async () => {
    const store = new MemoryBundleStore();
    await store.setLogSettings({
      tenantId: TENANT,
      settings: { sample: 1, mask: [], retainDays: 7, retain: 10 },
      by: "ops",
    });
    // The store refuses every batch for good; the buffer holds 2 entries: the rest are dropped as full.
    const refusing = Object.assign(Object.create(store), {
      logSettings: (t?: TenantId) => store.logSettings(t),
      appendDecisions: () => Promise.reject(new StoreError("full", "The disk is full")),
    });
    const log = await DecisionLog.open(refusing, { bufferSize: 2, flushMs: 60_000 });
    const dispatcher = createDispatcher({
      executor: new FakeExecutor(() => returned({ type: "block", reason: "no" })),
      decisionLog: log,
    });
    for (let i = 0; i < 5; i++) {
      const run = dispatcher.openRun({
        tenantId: TENANT,
        runId: RunId.parse(`run-${i}`),
        bundle: bundleOf(["tool.call"]),
      });
      run.beginTurn(1);
      await run.dispatch("tool.call", toolCallEvent());
    }
    await log.close();
    const stats = log.stats();
    expect(stats).toMatchObject({ recorded: 2, droppedFull: 3, droppedFailed: 2 });
    expect(await dropped()).toEqual({ full: 3, failed: 2 });
  });
});
