import {
  context,
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  SpanKind,
  TraceFlags,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { BundleRef, HookPoint } from "../protocol/index.js";
import type { CallReach, HookCallView, QuarantineEntry } from "./hook-call.js";
import { HookMetrics } from "./hook-metrics.js";
import { ATTR, SCOPE, SPAN } from "./names.js";
import { hrNow, type RunEnding, RunTrace, type SpanRef } from "./run-trace.js";
import type { WorkerEventView } from "./sandbox-metrics.js";
import { DEFAULT_MAX_TENANTS, TenantLabels } from "./tenant-labels.js";
import { RecentWorkerDeath } from "./worker-exits.js";

/** What opening a run tells telemetry. */
export interface RunTelemetryInfo {
  readonly tenantId: string;
  readonly runId: string;
  readonly bundle: BundleRef | undefined;
  /** A resumed run: the paused run's span, which this run's span links to. */
  readonly resumes?: SpanRef | undefined;
}

/**
 * One dispatcher's telemetry through `@opentelemetry/api` alone: the platform's registered SDK (if any)
 * receives the spans and metrics; with none, `openRun` returns undefined and a run costs nothing more.
 * The tracer is looked up once (a proxy that follows a provider registered later); the instruments are
 * created at the first run that finds a meter provider registered.
 */
export class Telemetry {
  readonly #tracer: Tracer = trace.getTracer(SCOPE);
  readonly #labels: TenantLabels;
  readonly #deaths = new RecentWorkerDeath();
  readonly #streamEvents: boolean;
  #metrics: HookMetrics | undefined;

  /** `streamEvents`: a span event per streamed delta (kind and size only); off by default, a reply has many. */
  constructor(maxTenants = DEFAULT_MAX_TENANTS, streamEvents = false) {
    this.#labels = new TenantLabels(maxTenants);
    this.#streamEvents = streamEvents;
  }

  /** What the executor's supervisor reported: a worker's death marks the span of the call it failed. */
  observeSandbox(event: WorkerEventView): void {
    this.#deaths.observe(event);
  }

  /** A quarantine that reached this host from the fleet (no call of this host started it): counted by origin. */
  quarantined(tenantId: string, entry: QuarantineEntry): void {
    this.#hookMetrics()?.quarantined(tenantId, entry);
  }

  /** The run's telemetry, or undefined when there is nothing to report to (no SDK, or the run is sampled out). */
  openRun(info: RunTelemetryInfo): RunTelemetry | undefined {
    const metrics = this.#hookMetrics();
    const runTrace = tracing() ? this.#startRun(info) : undefined;
    if (runTrace === undefined && metrics === undefined) return undefined;
    return new RunTelemetry(info.tenantId, runTrace, metrics, this.#streamEvents);
  }

  #hookMetrics(): HookMetrics | undefined {
    if (this.#metrics !== undefined) return this.#metrics;
    const meter = metrics.getMeter(SCOPE);
    if (meter === createNoopMeter()) return undefined;
    this.#metrics = new HookMetrics(meter, this.#labels);
    return this.#metrics;
  }

  #startRun(info: RunTelemetryInfo): RunTrace | undefined {
    const attributes: Record<string, string | number> = {
      [ATTR.operation]: "invoke_agent",
      [ATTR.conversation]: info.runId,
      [ATTR.tenant]: info.tenantId,
    };
    if (info.bundle !== undefined) {
      attributes[ATTR.bundleVersion] = info.bundle.version;
      attributes[ATTR.bundleHash] = info.bundle.hash;
    }
    const links =
      info.resumes === undefined
        ? []
        : [{ context: { ...info.resumes, traceFlags: TraceFlags.SAMPLED, isRemote: true } }];
    const span = this.#tracer.startSpan(
      SPAN.run,
      { kind: SpanKind.INTERNAL, startTime: hrNow(), attributes, links },
      context.active(),
    );
    // A run the sampler drops is not traced at all: no turn, dispatch or hook span is started for it.
    return span.isRecording() ? new RunTrace(this.#tracer, span, info.tenantId, this.#deaths) : undefined;
  }
}

/** Whether a tracer provider is registered: without one, not even the run span is started. */
function tracing(): boolean {
  const provider = trace.getTracerProvider();
  // Another copy of the API registered the provider: its proxy is not ours to look into.
  if (!(provider instanceof ProxyTracerProvider)) return true;
  return provider.getDelegateTracer(SCOPE) !== undefined;
}

/**
 * One run's telemetry: its spans (when traced) and the dispatcher's metrics (when a meter provider is
 * registered). The dispatcher calls it at each turn, dispatch and hook call.
 */
export class RunTelemetry {
  readonly #tenantId: string;
  readonly #trace: RunTrace | undefined;
  readonly #metrics: HookMetrics | undefined;
  readonly #streamEvents: boolean;

  constructor(tenantId: string, trace: RunTrace | undefined, metrics: HookMetrics | undefined, streamEvents = false) {
    this.#tenantId = tenantId;
    this.#trace = trace;
    this.#metrics = metrics;
    this.#streamEvents = streamEvents;
  }

  /** A streamed delta of the model's reply: a span event when `streamEvents` is on. */
  streamed(kind: string, chars: number, callId: string | undefined): void {
    if (this.#streamEvents) this.#trace?.streamed(kind, chars, callId);
  }

  beginTurn(turn: number): void {
    this.#trace?.beginTurn(turn);
  }

  beginDispatch(point: HookPoint): void {
    this.#trace?.beginDispatch(point);
  }

  endDispatch(decision: string | undefined): void {
    this.#trace?.endDispatch(decision);
  }

  /**
   * One hook call ended; `refused` says it never reached its executor (quarantine, budget, no sandbox).
   * Call once per record, after it is built.
   */
  hookCalled(call: HookCallView, refused: boolean): void {
    const reach = reachOf(call, refused);
    this.#trace?.hookCalled(call, reach);
    this.#metrics?.record(this.#tenantId, call, reach);
  }

  quarantined(entry: QuarantineEntry): void {
    this.#trace?.quarantined(entry);
    this.#metrics?.quarantined(this.#tenantId, entry);
  }

  /** The run ended (`run.end`), paused for approval, or was dropped without one (`undefined`). */
  end(ending: RunEnding | undefined): void {
    this.#trace?.end(ending);
  }

  /** The run span, when traced. */
  get ref(): SpanRef | undefined {
    return this.#trace?.ref;
  }
}

function reachOf(call: HookCallView, refused: boolean): CallReach {
  if (call.source !== "tenant") return "in_process";
  const code = call.outcome.type === "failed" ? call.outcome.failure.code : undefined;
  if (refused) return code === "timeout" ? "budget" : "refused";
  return code === "event_too_large" ? "refused" : "sandbox";
}
