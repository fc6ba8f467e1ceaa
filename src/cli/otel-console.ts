import { type Attributes, metrics, trace } from "@opentelemetry/api";
import type { DataPoint, MetricData, ResourceMetrics } from "@opentelemetry/sdk-metrics";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { lines, printableJson } from "../terminal/index.js";
import { CliError, type CliIO } from "./command.js";

/** The environment variable that turns OpenTelemetry on for one CLI invocation. */
export const OTEL_ENV = "ISOHOOK_OTEL";

/** An OpenTelemetry SDK registered for one CLI invocation; `shutdown` flushes it and unregisters it. */
export interface OtelSession {
  shutdown(): Promise<void>;
}

/**
 * `ISOHOOK_OTEL=console`: registers the OpenTelemetry SDK (optional dependencies, loaded here and nowhere
 * else) for this invocation and writes every span to stderr as one JSON line as it ends
 * (`{"span", "traceId", "spanId", "parentSpanId", "startTime", "durationMs", "status", "attributes",
 * "events"}`), then, at the end, each metric as one line (`{"metric", "unit", "dataPoints"}`). Stdout is
 * untouched. Unset or empty: nothing is loaded. Any other value is an error naming the one supported.
 */
export async function startOtel(io: CliIO): Promise<OtelSession | undefined> {
  const mode = io.env[OTEL_ENV];
  if (mode === undefined || mode === "") return undefined;
  if (mode !== "console") {
    throw new CliError(
      `${OTEL_ENV}=${JSON.stringify(mode)} is not supported: set it to \`console\` (spans and metrics as JSON lines on stderr), or leave it unset. A platform wires its own collector through the library (docs/telemetry.md)`,
      "invalid_otel",
    );
  }
  let traceSdk: typeof import("@opentelemetry/sdk-trace-base");
  let metricsSdk: typeof import("@opentelemetry/sdk-metrics");
  try {
    [traceSdk, metricsSdk] = await Promise.all([
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/sdk-metrics"),
    ]);
  } catch (error) {
    throw new CliError(
      `${OTEL_ENV}=console needs the OpenTelemetry SDK, an optional dependency of isohook that is not installed (${error instanceof Error ? error.message : String(error)}): run \`npm install @opentelemetry/sdk-trace-base @opentelemetry/sdk-metrics\``,
      "otel_unavailable",
    );
  }
  const line = (value: unknown) => io.stderr(lines([printableJson(value)]));
  const tracerProvider = new traceSdk.BasicTracerProvider({
    spanProcessors: [new traceSdk.SimpleSpanProcessor(jsonLineExporter(line))],
  });
  const reader = new metricsSdk.PeriodicExportingMetricReader({
    exporter: new metricsSdk.InMemoryMetricExporter(metricsSdk.AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 2_147_483_647,
  });
  const meterProvider = new metricsSdk.MeterProvider({ readers: [reader] });
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    async shutdown() {
      const collected = await reader.collect();
      for (const metric of metricsOf(collected.resourceMetrics)) line(metric);
      trace.disable();
      metrics.disable();
      await Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]);
    },
  };
}

/** Writes each ended span as one JSON line. */
function jsonLineExporter(line: (value: unknown) => void): SpanExporter {
  return {
    export(spans, done) {
      for (const span of spans) line(spanLine(span));
      done({ code: 0 });
    },
    shutdown: () => Promise.resolve(),
  };
}

function spanLine(span: ReadableSpan) {
  const context = span.spanContext();
  return {
    span: span.name,
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    startTime: new Date(ms(span.startTime)).toISOString(),
    durationMs: Math.round(ms(span.duration) * 1000) / 1000,
    status: ["unset", "ok", "error"][span.status.code] ?? "unset",
    attributes: span.attributes,
    events: span.events.map((event) => ({ name: event.name, attributes: event.attributes ?? {} })),
  };
}

function* metricsOf(resourceMetrics: ResourceMetrics) {
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) yield metricLine(metric);
  }
}

function metricLine(metric: MetricData) {
  const dataPoints = (metric.dataPoints as DataPoint<unknown>[]).map((point) => ({
    attributes: point.attributes as Attributes,
    value: histogramOf(point.value) ?? point.value,
  }));
  return { metric: metric.descriptor.name, unit: metric.descriptor.unit, dataPoints };
}

/** A histogram point without its buckets: count, sum, min and max. */
function histogramOf(value: unknown) {
  if (typeof value !== "object" || value === null || !("count" in value)) return undefined;
  const { count, sum, min, max } = value as { count: number; sum?: number; min?: number; max?: number };
  return { count, sum, min, max };
}

const ms = ([seconds, nanos]: readonly [number, number]) => seconds * 1000 + nanos / 1e6;
