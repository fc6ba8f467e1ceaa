/**
 * `isohook/loop`: the parts the runtime wires together, for hosts that bring their own loop or executor:
 * the dispatcher (stacking, failure policy, quarantine, budgets, provenance) and the agent loop.
 */
export {
  type AgentEvent,
  type AgentLoopOptions,
  type AgentRunResult,
  DEFAULT_MAX_TURNS,
  type HooksDecidedEvent,
  runAgentLoop,
  type StopReason,
} from "./agent/index.js";
export {
  createDispatcher,
  DEFAULT_POLICY,
  type DecidedBy,
  type DecisionEntry,
  type DecisionSink,
  type DispatchEvent,
  type Dispatched,
  type Dispatcher,
  type DispatcherOptionsInput,
  type FailurePolicy,
  type HookCalledEvent,
  type HookSource,
  type OpenRunOptions,
  type PlatformHandler,
  type PlatformHandlers,
  type PlatformHookContext,
  type PolicyMap,
  type QuarantineEnteredEvent,
  type QuarantineExitedEvent,
  type RunDispatcher,
} from "./dispatch/index.js";
export type {
  HookContext,
  HookEvent,
  HookResult,
  Message,
  ToolCall,
  ToolResult,
  ToolSpec,
  Usage,
} from "./protocol/index.js";
export type { RunStartedEvent, RuntimeEvent } from "./runtime/index.js";
