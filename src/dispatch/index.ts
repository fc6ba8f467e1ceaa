/**
 * Dispatch: stacks platform `first` hooks, the tenant's bundle and platform `last` hooks on each hook
 * point, combines their results by the stacking rules (docs/architecture.md, "Hook points, events and stacking"),
 * applies the failure policy, quarantine and budgets (docs/architecture.md, "Failure is data"), and emits one
 * provenance event per hook call. `invokeHook` is the one place guest output is parsed.
 */
export type {
  Dispatcher,
  DispatchOptions,
  OpenRunOptions,
  RunDispatcher,
  RunSnapshot,
} from "./api.js";
export type { DecisionEntry, DecisionSink } from "./decision-sink.js";
export type {
  ContextPrepareDecision,
  DecidedBy,
  Dispatched,
  HookRecord,
  InputInboundDecision,
  ModelRequestDecision,
  ModelRequestPatch,
  ModelResponseDecision,
  ModelStreamDecision,
  OutputValidateDecision,
  PointDecision,
  PointDecisions,
  RecordedOutcome,
  RunEndDecision,
  RunStartDecision,
  StopDecision,
  ToolCallDecision,
  ToolInvalidDecision,
  ToolResultDecision,
  ToolsPrepareDecision,
  TurnEndDecision,
} from "./decisions.js";
export { createDispatcher } from "./dispatcher.js";
export { DispatchError, type DispatchErrorCode } from "./errors.js";
export type {
  DispatchEvent,
  Emit,
  HookCalledEvent,
  HookShadowedEvent,
  QuarantineEnteredEvent,
  QuarantineExitedEvent,
} from "./events.js";
export { type InvokedHook, invokeHook } from "./invoke-hook.js";
export { callsHandler, type HandlerManifest } from "./matchers.js";
export { type DispatcherOptionsInput, parseDispatcherOptions } from "./options.js";
export type {
  FailureReport,
  FleetQuarantine,
  QuarantineLedger,
  QuarantineSettings,
  ReportedFailure,
} from "./quarantine-ledger.js";
export type {
  FailurePolicy,
  HookSource,
  PlatformHandler,
  PlatformHandlers,
  PlatformHookContext,
  PlatformHooks,
  PlatformReturn,
  PolicyMap,
} from "./registration.js";
export { decidingBundle, ROLLOUT_BUCKETS, rolloutBucket } from "./rollout-pick.js";
export type { PointRule } from "./rule.js";
export { DEFAULT_POLICY, RULES } from "./rules.js";
export { mapStack, SourceMapIndex, withSourceStack } from "./stack-map.js";
