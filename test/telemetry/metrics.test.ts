import { type Attributes, metrics } from "@opentelemetry/api";
import {
  AggregationTemporality,
  type DataPoint,
  type Histogram,
  InMemoryMetricExporter,
  MeterProvider,
  type MetricData,
  PeriodicExportingMetricReader,
} from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecisionLog } from "../../src/decisionlog/index.js";
import { createDispatcher } from "../../src/dispatch/index.js";
import { BundleHash, RunId, type SandboxResult, TenantId } from "../../src/protocol/index.js";
import { MemoryBundleStore, StoreError } from "../../src/store/index.js";
import { ATTR, METRIC, SandboxMetrics } from "../../src/telemetry/index.js";
import {
  bundleOf,
  FakeClock,
  FakeExecutor,
  returned,
  sandboxFailed,
  TENANT,
  toolCallEvent,
} from "../dispatch/helpers.js";

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

async function collect(): Promise<MetricData[]> {
  exporter.reset();
  await reader.forceFlush();
  return exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
}

function points(all: MetricData[], name: string): DataPoint<unknown>[] {
  return (all.find((m) => m.descriptor.name === name)?.dataPoints ?? []) as DataPoint<unknown>[];
}

function total(all: MetricData[], name: string, attributes: Attributes): unknown {
  const matching = points(all, name).filter((p) =>
    Object.entries(attributes).every(([key, value]) => p.attributes[key] === value),
  );
  if (matching.length === 0) return undefined;
  return matching.reduce((sum, p) => sum + (typeof p.value === "number" ? p.value : (p.value as Histogram).count), 0);
}

/** A hostile tenant whose every call times out, next to a healthy one, on a fake sandbox and clock. */
describe("metrics of a hostile run", () => {
  let all: MetricData[];
  const clock = new FakeClock();

  beforeAll(async () => {
    const loaded = new Set<string>();
    const executor = new FakeExecutor((seen): SandboxResult => {
      if (seen.call.tenantId === "mallory") return sandboxFailed("timeout", 50);
      const cold = !loaded.has(seen.call.tenantId);
      loaded.add(seen.call.tenantId);
      return {
        ...returned(undefined, { runMs: 40, cpuMs: 30 }),
        ...(cold ? { loadMs: 5, evicted: 2 } : {}),
        queuedMs: 1,
      };
    });
    const dispatcher = createDispatcher({
      executor,
      clock: clock.read,
      budgets: { turnMs: 100, runMs: 10_000 },
      telemetry: { maxTenants: 2 },
    });
    const open = (tenant: string, n: number) => {
      const tenantId = TenantId.parse(tenant);
      const hash = BundleHash.parse(`sha256-${String(n).repeat(64)}`);
      const bundle = { ...bundleOf(["tool.call"], { hash }), tenantId };
      return dispatcher.openRun({ tenantId, runId: RunId.parse(`run-${tenant}`), bundle });
    };
    const mallory = open("mallory", 1);
    for (let turn = 1; turn <= 8; turn++) {
      mallory.beginTurn(turn);
      await mallory.dispatch("tool.call", toolCallEvent());
      clock.advance(10);
    }
    const acme = open("acme", 2);
    acme.beginTurn(1);
    for (let i = 0; i < 4; i++) await acme.dispatch("tool.call", toolCallEvent());
    for (const [i, tenant] of ["t3", "t4", "t5"].entries()) {
      const run = open(tenant, i + 3);
      run.beginTurn(1);
      await run.dispatch("tool.call", toolCallEvent());
    }
    all = await collect();
  });

  const mallory = {
    "isohook.tenant.id": "mallory",
    "isohook.hook.point": "tool.call",
    "isohook.hook.source": "tenant",
  };
  const acme = { ...mallory, "isohook.tenant.id": "acme" };

  it("counts calls by outcome and failures by code, quarantine entries, budget denials", () => {
    expect(total(all, "isohook.hook.calls", { ...mallory, "isohook.hook.outcome": "failed" })).toBe(8);
    expect(total(all, "isohook.hook.failures", { ...mallory, "error.type": "timeout" })).toBe(5);
    expect(total(all, "isohook.hook.failures", { ...mallory, "error.type": "quarantined" })).toBe(3);
    expect(total(all, "isohook.quarantine.entries", { "isohook.tenant.id": "mallory", "error.type": "timeout" })).toBe(
      1,
    );
    // acme's turn budget (100 ms) allows 40 + 40 + 20 (clamped) ms: its fourth call is denied.
    expect(total(all, "isohook.hook.calls", { ...acme, "isohook.hook.outcome": "decided" })).toBe(3);
    expect(total(all, "isohook.budget.denials", acme)).toBe(1);
    expect(total(all, "isohook.budget.denials", mallory)).toBeUndefined();
  });

  it("measures duration and CPU of the calls that reached the sandbox, in seconds", () => {
    expect(total(all, "isohook.hook.duration", mallory)).toBe(5);
    expect(total(all, "isohook.hook.duration", acme)).toBe(3);
    const cpu = points(all, "isohook.hook.cpu_time").find((p) => p.attributes["isohook.tenant.id"] === "acme");
    expect((cpu?.value as Histogram | undefined)?.sum).toBeCloseTo(0.09, 6);
    const duration = all.find((m) => m.descriptor.name === "isohook.hook.duration");
    expect(duration?.descriptor.unit).toBe("s");
  });

  it("counts isolate cache hits and misses from the calls' load times", () => {
    expect(total(all, "isohook.isolate.cache.misses", acme)).toBe(1);
    expect(total(all, "isohook.isolate.cache.hits", acme)).toBe(2);
  });

  it("counts the isolates evicted to make room for the calls, as the worker reports them", () => {
    // Each tenant's cold call evicted 2 isolates; mallory's calls (all failed, none cold) evicted none.
    expect(total(all, "isohook.isolate.cache.evictions", acme)).toBe(2);
    expect(total(all, "isohook.isolate.cache.evictions", { "isohook.tenant.id": "other" })).toBe(6);
    expect(total(all, "isohook.isolate.cache.evictions", mallory)).toBeUndefined();
    const evictions = all.find((m) => m.descriptor.name === "isohook.isolate.cache.evictions");
    expect(evictions?.descriptor.unit).toBe("{isolate}");
  });

  it("reports tenants past the cap as other", () => {
    const tenants = new Set(points(all, "isohook.hook.calls").map((p) => p.attributes["isohook.tenant.id"]));
    expect([...tenants].sort()).toEqual(["acme", "mallory", "other"]);
    expect(total(all, "isohook.hook.calls", { "isohook.tenant.id": "other" })).toBe(3);
  });
});

describe("sandbox metrics", () => {
  it("counts worker restarts by reason and reads pending calls and RSS per worker at collection", async () => {
    const sandbox = SandboxMetrics.start({
      workers: () => [
        { slot: 0, pending: 3, rssBytes: 120_000_000 },
        { slot: 1, pending: 0, rssBytes: undefined },
      ],
    });
    expect(sandbox).toBeDefined();
    sandbox?.observe({ type: "worker_exited", reason: "crashed" });
    sandbox?.observe({ type: "worker_exited", reason: "deadline" });
    sandbox?.observe({ type: "worker_exited", reason: "crashed" });
    sandbox?.observe({ type: "worker_exited", reason: "closed" });
    sandbox?.observe({ type: "worker_started" });
    const all = await collect();
    sandbox?.close();
    expect(total(all, "isohook.worker.restarts", { "isohook.worker.exit_reason": "crashed" })).toBe(2);
    expect(total(all, "isohook.worker.restarts", { "isohook.worker.exit_reason": "deadline" })).toBe(1);
    expect(total(all, "isohook.worker.restarts", { "isohook.worker.exit_reason": "closed" })).toBeUndefined();
    expect(total(all, "isohook.sandbox.pending", { "isohook.worker.slot": 0 })).toBe(3);
    expect(total(all, "isohook.worker.rss", { "isohook.worker.slot": 0 })).toBe(120_000_000);
    expect(points(all, "isohook.worker.rss")).toHaveLength(1);
  });
});

describe("the decision log's drop counter", () => {
  it("counts every dropped record by reason, as stats() does", async () => {
    const store = new MemoryBundleStore();
    const settings = { sample: 1, mask: [], retainDays: 7, retain: 10 };
    await store.setLogSettings({ tenantId: TENANT, settings, by: "ops" });
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
        runId: RunId.parse(`drop-${i}`),
        bundle: bundleOf(["tool.call"]),
      });
      run.beginTurn(1);
      await run.dispatch("tool.call", toolCallEvent());
    }
    await log.close();
    expect(log.stats()).toMatchObject({ recorded: 2, droppedFull: 3, droppedFailed: 2 });
    const all = await collect();
    expect(total(all, METRIC.decisionLogDropped, { [ATTR.dropReason]: "full" })).toBe(3);
    expect(total(all, METRIC.decisionLogDropped, { [ATTR.dropReason]: "failed" })).toBe(2);
  });
});
