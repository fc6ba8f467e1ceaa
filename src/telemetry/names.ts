/**
 * The names isohook reports under: the instrumentation scope, span names, attribute keys and metric names.
 * OpenTelemetry semantic conventions where one exists (`gen_ai.*` for the run, `error.type` for failure
 * codes); `isohook.*` for the rest. Attribute values are ids, codes, counts and times — never the content of
 * an event, a result, a log or a message (a tenant's or a user's data).
 */
export const SCOPE = "isohook";

export const SPAN = {
  /** GenAI agent conventions: `invoke_agent {gen_ai.agent.name}`; isohook names no agent, so the bare operation. */
  run: "invoke_agent",
  turn: "isohook.turn",
  dispatch: "isohook.dispatch",
  hook: "isohook.hook",
} as const;

export const EVENT = {
  quarantine: "isohook.quarantine.entered",
  workerDied: "isohook.worker.died",
  /** One piece of a streamed model reply (when `telemetry.streamEvents` is on): its kind and size, never its text. */
  delta: "isohook.model.delta",
} as const;

export const ATTR = {
  operation: "gen_ai.operation.name",
  conversation: "gen_ai.conversation.id",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  errorType: "error.type",
  tenant: "isohook.tenant.id",
  stopReason: "isohook.run.stop_reason",
  turns: "isohook.run.turns",
  turn: "isohook.turn",
  point: "isohook.hook.point",
  hookId: "isohook.hook.id",
  source: "isohook.hook.source",
  policy: "isohook.hook.policy",
  bundleVersion: "isohook.bundle.version",
  bundleHash: "isohook.bundle.hash",
  outcome: "isohook.hook.outcome",
  /** Set when a call did not cross into the sandbox: `budget`, `refused` or `in_process` (`CallReach`). */
  reach: "isohook.hook.reach",
  decision: "isohook.decision.type",
  hooks: "isohook.dispatch.hooks",
  cpuMs: "isohook.hook.cpu_ms",
  runMs: "isohook.hook.run_ms",
  queuedMs: "isohook.hook.queued_ms",
  loadMs: "isohook.hook.load_ms",
  loadAfterRecycle: "isohook.hook.load_after_recycle",
  bystander: "isohook.failure.bystander",
  cooldownMs: "isohook.quarantine.cooldown_ms",
  strike: "isohook.quarantine.strike",
  origin: "isohook.quarantine.origin",
  workerReason: "isohook.worker.exit_reason",
  workerSlot: "isohook.worker.slot",
  streamKind: "isohook.stream.kind",
  deltaChars: "isohook.stream.chars",
  toolCallId: "gen_ai.tool.call.id",
  /** Why decision-log records were dropped: `full` (the buffer) or `failed` (the store). */
  dropReason: "isohook.decisionlog.drop_reason",
} as const;

export const METRIC = {
  duration: "isohook.hook.duration",
  cpu: "isohook.hook.cpu_time",
  calls: "isohook.hook.calls",
  failures: "isohook.hook.failures",
  quarantines: "isohook.quarantine.entries",
  budgetDenials: "isohook.budget.denials",
  cacheHits: "isohook.isolate.cache.hits",
  cacheMisses: "isohook.isolate.cache.misses",
  cacheEvictions: "isohook.isolate.cache.evictions",
  workerRestarts: "isohook.worker.restarts",
  workerRss: "isohook.worker.rss",
  pending: "isohook.sandbox.pending",
  decisionLogDropped: "isohook.decisionlog.dropped",
} as const;

/** The label of tenants past the cap of distinct tenants a metric reports (`TenantLabels`). */
export const OTHER_TENANT = "other";
