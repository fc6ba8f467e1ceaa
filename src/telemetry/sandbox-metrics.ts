import {
  type BatchObservableCallback,
  type Counter,
  createNoopMeter,
  type Meter,
  metrics,
  type Observable,
  ValueType,
} from "@opentelemetry/api";
import { ATTR, METRIC, SCOPE } from "./names.js";

/** A worker process as a process executor's `workers()` reports it (`rssBytes` as last read). */
export interface WorkerView {
  readonly slot: number;
  readonly pending: number;
  readonly rssBytes?: number | undefined;
}

/** What sandbox metrics read from the executor and its events; each part is optional. */
export interface SandboxSource {
  /** The process executor's workers (absent in inline mode and for a platform's own executor). */
  readonly workers?: (() => readonly WorkerView[]) | undefined;
}

/** A supervisor event as sandbox metrics read it. */
export interface WorkerEventView {
  readonly type: string;
  readonly reason?: string;
}

/**
 * The sandbox's own metrics, from what the executor already reports, without new traffic to the workers:
 * restarts from its `worker_exited` events (by exit reason; `closed` is a shutdown, not a restart), and, at
 * each collection, pending calls and RSS per worker slot from `workers()`. Created by the runtime when a
 * meter provider is registered; `close()` unregisters the observers.
 */
export class SandboxMetrics {
  readonly #meter: Meter;
  readonly #restarts: Counter;
  readonly #observables: Observable[];
  readonly #observe: BatchObservableCallback;

  static start(source: SandboxSource): SandboxMetrics | undefined {
    const meter = metrics.getMeter(SCOPE);
    return meter === createNoopMeter() ? undefined : new SandboxMetrics(meter, source);
  }

  private constructor(meter: Meter, source: SandboxSource) {
    this.#meter = meter;
    this.#restarts = meter.createCounter(METRIC.workerRestarts, {
      description: "Sandbox worker processes replaced, by why the old one ended",
      unit: "{restart}",
      valueType: ValueType.INT,
    });
    const pending = meter.createObservableGauge(METRIC.pending, {
      description: "Calls sent to a sandbox worker and not yet answered (queued or running)",
      unit: "{call}",
      valueType: ValueType.INT,
    });
    const rss = meter.createObservableGauge(METRIC.workerRss, {
      description: "Resident set size of a sandbox worker process, as last read by the RSS watch",
      unit: "By",
      valueType: ValueType.INT,
    });
    this.#observables = [pending, rss];
    this.#observe = (result) => {
      for (const worker of source.workers?.() ?? []) {
        const attributes = { [ATTR.workerSlot]: worker.slot };
        result.observe(pending, worker.pending, attributes);
        if (worker.rssBytes !== undefined) result.observe(rss, worker.rssBytes, attributes);
      }
    };
    meter.addBatchObservableCallback(this.#observe, this.#observables);
  }

  /** Counts a worker restart from a supervisor event; other events are ignored. */
  observe(event: WorkerEventView): void {
    if (event.type !== "worker_exited" || event.reason === undefined || event.reason === "closed") return;
    this.#restarts.add(1, { [ATTR.workerReason]: event.reason });
  }

  close(): void {
    this.#meter.removeBatchObservableCallback(this.#observe, this.#observables);
  }
}
