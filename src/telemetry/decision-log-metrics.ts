import { type Counter, createNoopMeter, metrics, ValueType } from "@opentelemetry/api";
import { ATTR, METRIC, SCOPE } from "./names.js";

/**
 * The decision log's drops as an OpenTelemetry counter (`isohook.decisionlog.dropped`, by
 * `isohook.decisionlog.drop_reason`), for an alert. Drops are rare, so the meter is looked up at each
 * drop until a provider is registered (none: nothing is recorded), then the counter is kept.
 */
export class DecisionLogMetrics {
  #dropped: Counter | undefined;

  dropped(reason: "full" | "failed", count: number): void {
    this.#dropped ??= counter();
    this.#dropped?.add(count, { [ATTR.dropReason]: reason });
  }
}

function counter(): Counter | undefined {
  const meter = metrics.getMeter(SCOPE);
  if (meter === createNoopMeter()) return undefined;
  return meter.createCounter(METRIC.decisionLogDropped, {
    description: "Decision-log records dropped: the buffer was full, or the store refused their batch for good",
    unit: "{record}",
    valueType: ValueType.INT,
  });
}
