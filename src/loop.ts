/**
 * `isohook/loop`: the parts the runtime wires together, for hosts that bring their own loop or executor:
 * the dispatcher (stacking, failure policy, quarantine, budgets, provenance) and the agent loop, and
 * what a run paused for approval is made of (pending calls, snapshots, checkpoints). Its names are listed
 * in test/public-surface.test.ts: a new one is a deliberate edit there.
 */
export {
  type AgentEvent,
  type AgentLoopOptions,
  type AgentRunResult,
  type ApprovalDecisions,
  DEFAULT_MAX_TURNS,
  type HooksDecidedEvent,
  type PausedBatch,
  type PausedRun,
  type PendingApproval,
  resumeAgentLoop,
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
  type HookShadowedEvent,
  type HookSource,
  type OpenRunOptions,
  type PlatformHandler,
  type PlatformHandlers,
  type PlatformHookContext,
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
  openCheckpoint,
  type ResumeAgentOptions,
  type RunStartedEvent,
  type RuntimeEvent,
} from "./runtime/index.js";
