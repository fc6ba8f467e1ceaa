import {
  type Attributes,
  type BatchObservableCallback,
  type Counter,
  type Histogram,
  type Meter,
  type ObservableCounter,
  ValueType,
} from "@opentelemetry/api";
import type { CallReach, HookCallView, QuarantineEntry } from "./hook-call.js";
import { ATTR, METRIC } from "./names.js";
import type { TenantLabels } from "./tenant-labels.js";

/** Bucket bounds (seconds) for hook calls: from 50 µs (a warm call) to 5 s (a reload at its load timeout). */
const SECONDS_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** One (tenant label, point, source): its attribute sets, built once, and its running counts. */
interface Series {
  readonly base: Attributes;
  readonly decided: Attributes;
  readonly failed: Attributes;
  decidedCalls: number;
  failedCalls: number;
  budgetDenials: number;
  cacheHits: number;
  cacheMisses: number;
  /** Isolates the worker evicted to make room for these calls (`SandboxCost.evicted`). */
  cacheEvictions: number;
  /** Failed calls by code, with the code's attribute set. */
  readonly failures: Map<string, { readonly attributes: Attributes; count: number }>;
}

/**
 * The hook-call instruments of one dispatcher, created once (instrument lookups are hoisted off the call
 * path). Every series is by tenant (bounded by `TenantLabels`), point and source; attribute sets are built
 * once per series. Counts are kept here as plain numbers and reported by asynchronous counters when the
 * SDK collects, so a call pays for two histogram records and a few increments, not one SDK record (an
 * attribute hash, a map lookup) per counter.
 */
export class HookMetrics {
  readonly #labels: TenantLabels;
  readonly #duration: Histogram;
  readonly #cpu: Histogram;
  readonly #quarantines: Counter;
  readonly #series = new Map<string, Map<string, Map<string, Series>>>();
  readonly #all: Series[] = [];

  constructor(meter: Meter, labels: TenantLabels) {
    this.#labels = labels;
    const advice = { explicitBucketBoundaries: SECONDS_BUCKETS };
    this.#duration = meter.createHistogram(METRIC.duration, {
      description: "Time the caller waited for a hook call: queued, loading its bundle and running",
      unit: "s",
      advice,
    });
    this.#cpu = meter.createHistogram(METRIC.cpu, {
      description: "CPU time of the hook's isolate during the call (wall time for in-process platform hooks)",
      unit: "s",
      advice,
    });
    this.#quarantines = meter.createCounter(METRIC.quarantines, {
      description: "Times a tenant's bundle entered quarantine",
      unit: "{quarantine}",
      valueType: ValueType.INT,
    });
    const count = (name: string, description: string): ObservableCounter =>
      meter.createObservableCounter(name, { description, unit: "{call}", valueType: ValueType.INT });
    const calls = count(METRIC.calls, "Hook calls, by outcome (decided or failed)");
    const failures = count(METRIC.failures, "Failed hook calls, by failure code (error.type)");
    const budgetDenials = count(
      METRIC.budgetDenials,
      "Hook calls not made because the turn's or run's hook time budget was spent",
    );
    const cacheHits = count(METRIC.cacheHits, "Sandbox calls that found their isolate warm");
    const cacheMisses = count(METRIC.cacheMisses, "Sandbox calls that loaded their bundle into a new isolate");
    const cacheEvictions = meter.createObservableCounter(METRIC.cacheEvictions, {
      description: "Isolates a sandbox worker evicted (its isolate count or heap budget) to make room for a call",
      unit: "{isolate}",
      valueType: ValueType.INT,
    });
    const observe: BatchObservableCallback = (result) => {
      for (const series of this.#all) {
        if (series.decidedCalls > 0) result.observe(calls, series.decidedCalls, series.decided);
        if (series.failedCalls > 0) result.observe(calls, series.failedCalls, series.failed);
        for (const failure of series.failures.values()) result.observe(failures, failure.count, failure.attributes);
        if (series.budgetDenials > 0) result.observe(budgetDenials, series.budgetDenials, series.base);
        if (series.cacheHits > 0) result.observe(cacheHits, series.cacheHits, series.base);
        if (series.cacheMisses > 0) result.observe(cacheMisses, series.cacheMisses, series.base);
        if (series.cacheEvictions > 0) result.observe(cacheEvictions, series.cacheEvictions, series.base);
      }
    };
    const observables = [calls, failures, budgetDenials, cacheHits, cacheMisses, cacheEvictions];
    meter.addBatchObservableCallback(observe, observables);
  }

  /** Records one hook call of `tenantId` at its point. */
  record(tenantId: string, call: HookCallView, reach: CallReach): void {
    const series = this.#seriesOf(this.#labels.of(tenantId), call.point, call.source);
    const { outcome } = call;
    if (outcome.type === "failed") {
      series.failedCalls++;
      const code = outcome.failure.code;
      let failure = series.failures.get(code);
      if (failure === undefined) {
        failure = { attributes: Object.freeze({ ...series.failed, [ATTR.errorType]: code }), count: 0 };
        series.failures.set(code, failure);
      }
      failure.count++;
      if (reach === "budget") series.budgetDenials++;
    } else {
      series.decidedCalls++;
    }
    if (reach !== "sandbox" && reach !== "in_process") return;
    const waited = call.runMs + (call.queuedMs ?? 0) + (call.loadMs ?? 0);
    this.#duration.record(waited / 1000, series.base);
    this.#cpu.record(call.cpuMs / 1000, series.base);
    if (reach === "sandbox") {
      if (call.loadMs === undefined) series.cacheHits++;
      else series.cacheMisses++;
      series.cacheEvictions += call.evicted ?? 0;
    }
  }

  quarantined(tenantId: string, entry: QuarantineEntry): void {
    this.#quarantines.add(1, {
      [ATTR.tenant]: this.#labels.of(tenantId),
      [ATTR.errorType]: entry.code,
      [ATTR.origin]: entry.origin,
    });
  }

  #seriesOf(tenant: string, point: string, source: string): Series {
    let byPoint = this.#series.get(tenant);
    if (byPoint === undefined) {
      byPoint = new Map();
      this.#series.set(tenant, byPoint);
    }
    let bySource = byPoint.get(point);
    if (bySource === undefined) {
      bySource = new Map();
      byPoint.set(point, bySource);
    }
    let series = bySource.get(source);
    if (series === undefined) {
      const base = Object.freeze({ [ATTR.tenant]: tenant, [ATTR.point]: point, [ATTR.source]: source });
      series = {
        base,
        decided: Object.freeze({ ...base, [ATTR.outcome]: "decided" }),
        failed: Object.freeze({ ...base, [ATTR.outcome]: "failed" }),
        decidedCalls: 0,
        failedCalls: 0,
        budgetDenials: 0,
        cacheHits: 0,
        cacheMisses: 0,
        cacheEvictions: 0,
        failures: new Map(),
      };
      bySource.set(source, series);
      this.#all.push(series);
    }
    return series;
  }
}
