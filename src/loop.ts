/**
 * `isohook/loop`: for hosts that bring their own loop. `runtime.openRun()` gives a `HookRun` that dispatches
 * one hook point at a time with everything a run in isohook's loop gets; below it, the dispatcher
 * (stacking, failure policy, quarantine, budgets, provenance) and the agent loop for hosts that wire their
 * own executor, and what a run paused for approval is made of (pending calls, snapshots, checkpoints). Its names
 * are listed in test/public-surface.test.ts: a new one is a deliberate edit there.
 */
export {
  type AgentEvent,
  type AgentLoopOptions,
  type AgentLoopResult,
  type ApprovalDecisions,
  DEFAULT_MAX_TURNS,
  DEFAULT_STREAM_WINDOW,
  type HooksDecidedEvent,
  Inbox,
  type ModelDelta,
  type ModelStreamPart,
  type PausedBatch,
  type PausedRun,
  type PendingApproval,
  resumeAgentLoop,
  runAgentLoop,
  type StopReason,
  type StreamWindow,
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
  type DispatchOptions,
  type FailurePolicy,
  type HookCalledEvent,
  type HookShadowedEvent,
  type HookSource,
  type OpenRunOptions,
  type PlatformHandler,
  type PlatformHandlers,
  type PlatformHookContext,
  type PointDecision,
  type PolicyMap,
  type QuarantineEnteredEvent,
  type QuarantineExitedEvent,
  type RunDispatcher,
  type RunSnapshot,
  type ToolCallDecision,
} from "./dispatch/index.js";
export type {
  HookContext,
  HookEvent,
  HookPoint,
  HookResult,
  Message,
  ToolCall,
  ToolResult,
  ToolSpec,
  Usage,
} from "./protocol/index.js";
// Approvals: a run paused by an ask, sealed as a checkpoint, resumed with runtime.resumeAgent.
export {
  CHECKPOINT_VERSION,
  type Checkpoint,
  type CheckpointBody,
  type CheckpointKey,
  type HookRun,
  type OpenHookRunOptions,
  openCheckpoint,
  type ResumeAgentOptions,
  type RunStartedEvent,
  type RuntimeEvent,
  type RunWarning,
} from "./runtime/index.js";
