/**
 * Telemetry: OpenTelemetry spans and metrics of runs, turns, hook point dispatches and hook calls, and of
 * the sandbox, through `@opentelemetry/api` only (the only importer of it). Without an SDK registered by
 * the platform, it reports nothing and costs a run one check. Names: names.ts.
 */
export { DecisionLogMetrics } from "./decision-log-metrics.js";
export type { HookCallView, QuarantineEntry } from "./hook-call.js";
export { ATTR, EVENT, METRIC, OTHER_TENANT, SCOPE, SPAN } from "./names.js";
export type { RunEnding, SpanRef } from "./run-trace.js";
export {
  SandboxMetrics,
  type SandboxSource,
  type WorkerEventView,
  type WorkerView,
} from "./sandbox-metrics.js";
export { type RunTelemetry, Telemetry } from "./telemetry.js";
export { DEFAULT_MAX_TENANTS } from "./tenant-labels.js";
