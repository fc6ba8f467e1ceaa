import { type Attributes, type Counter, type Histogram, type Meter, ValueType } from "@opentelemetry/api";
import type { CallReach, HookCallView, QuarantineEntry } from "./hook-call.js";
import { ATTR, METRIC } from "./names.js";
import type { TenantLabels } from "./tenant-labels.js";

/** Bucket bounds (seconds) for hook calls: from 50 µs (a warm call) to 5 s (a reload at its load timeout). */
const SECONDS_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/**
 * The hook-call instruments of one dispatcher, created once (instrument lookups are hoisted off the call
 * path). Every series is by tenant (bounded by `TenantLabels`), point and source; attribute objects are
 * built once per series and reused, so a call allocates none of its own.
 */
export class HookMetrics {
  readonly #labels: TenantLabels;
  readonly #duration: Histogram;
  readonly #cpu: Histogram;
  readonly #calls: Counter;
  readonly #failures: Counter;
  readonly #quarantines: Counter;
  readonly #budgetDenials: Counter;
  readonly #cacheHits: Counter;
  readonly #cacheMisses: Counter;
  readonly #series = new Map<string, Attributes>();

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
    const count = (name: string, description: string, unit: string) =>
      meter.createCounter(name, { description, unit, valueType: ValueType.INT });
    this.#calls = count(METRIC.calls, "Hook calls, by outcome (decided or failed)", "{call}");
    this.#failures = count(METRIC.failures, "Failed hook calls, by failure code (error.type)", "{call}");
    this.#quarantines = count(METRIC.quarantines, "Times a tenant's bundle entered quarantine", "{quarantine}");
    this.#budgetDenials = count(
      METRIC.budgetDenials,
      "Hook calls not made because the turn's or run's hook time budget was spent",
      "{call}",
    );
    this.#cacheHits = count(METRIC.cacheHits, "Sandbox calls that found their isolate warm", "{call}");
    this.#cacheMisses = count(
      METRIC.cacheMisses,
      "Sandbox calls that loaded their bundle into a new isolate",
      "{call}",
    );
  }

  /** Records one hook call of `tenantId` at its point. */
  record(tenantId: string, call: HookCallView, reach: CallReach): void {
    const tenant = this.#labels.of(tenantId);
    const { outcome } = call;
    this.#calls.add(1, this.#attributes(tenant, call, outcome.type, undefined));
    if (outcome.type === "failed") {
      this.#failures.add(1, this.#attributes(tenant, call, "failed", outcome.failure.code));
      if (reach === "budget") this.#budgetDenials.add(1, this.#attributes(tenant, call, undefined, undefined));
    }
    if (reach !== "sandbox" && reach !== "in_process") return;
    const base = this.#attributes(tenant, call, undefined, undefined);
    const waited = call.runMs + (call.queuedMs ?? 0) + (call.loadMs ?? 0);
    this.#duration.record(waited / 1000, base);
    this.#cpu.record(call.cpuMs / 1000, base);
    if (reach === "sandbox") (call.loadMs === undefined ? this.#cacheHits : this.#cacheMisses).add(1, base);
  }

  quarantined(tenantId: string, entry: QuarantineEntry): void {
    const tenant = this.#labels.of(tenantId);
    this.#quarantines.add(
      1,
      this.#cached(`q\u0000${tenant}\u0000${entry.code}`, () => ({
        [ATTR.tenant]: tenant,
        [ATTR.errorType]: entry.code,
      })),
    );
  }

  #attributes(tenant: string, call: HookCallView, outcome: string | undefined, code: string | undefined): Attributes {
    const key = `${tenant}\u0000${call.point}\u0000${call.source}\u0000${outcome ?? ""}\u0000${code ?? ""}`;
    return this.#cached(key, () => {
      const attributes: Attributes = { [ATTR.tenant]: tenant, [ATTR.point]: call.point, [ATTR.source]: call.source };
      if (outcome !== undefined) attributes[ATTR.outcome] = outcome;
      if (code !== undefined) attributes[ATTR.errorType] = code;
      return attributes;
    });
  }

  #cached(key: string, make: () => Attributes): Attributes {
    let attributes = this.#series.get(key);
    if (attributes === undefined) {
      attributes = Object.freeze(make());
      this.#series.set(key, attributes);
    }
    return attributes;
  }
}
