export { type ActiveBundle, BundleManifest, type BundleSource } from "./bundle.js";
export { BundleRef } from "./bundle-ref.js";
export { closestName } from "./closest-name.js";
export { HookContext } from "./context.js";
export {
  DescribeReply,
  describeOutcomeOf,
  type ParsedDescribe,
  parseDescribeReply,
} from "./describe-reply.js";
export * as events from "./events.js";
export {
  admitCall,
  type DescribeOutcome,
  ExecutorClosedError,
  type HookExecutor,
  isRefused,
  type SandboxBundle,
  type SandboxCall,
  type SandboxCost,
  type SandboxResult,
} from "./executor.js";
export { failureText } from "./failure-text.js";
export {
  CHANNEL_FD_ENV,
  decodeRequestFrame,
  decodeResponseFrame,
  encodeFrames,
  FrameReader,
  MAX_FRAME_BYTES,
} from "./frames.js";
export { GuestReply, maxReplyChars, parseGuestReply } from "./guest-reply.js";
export {
  type HandlerName,
  HOOK_POINT_NAMES,
  HOOK_POINTS,
  type HookEvent,
  type HookPoint,
  type HookResult,
  handlerOf,
  hookPointOfHandler,
  isHookPoint,
} from "./hook-points.js";
export { hookSchema } from "./hook-schema.js";
export { BundleHash, HookId, RUN_ID_RULE, RunId, TenantId } from "./ids.js";
export { isJsonValue, JsonObject, type JsonSchema, JsonValue, MAX_JSON_DEPTH, toJsonSchema } from "./json.js";
export {
  DEFAULT_LIMITS,
  Limits,
  type LimitsInput,
  loadTimeoutOf,
  MAX_WALL_BACKSTOP_FACTOR,
  MIN_WALL_BACKSTOP_FACTOR,
  maxWallBackstopOf,
} from "./limits.js";
export {
  AssistantMessage,
  MAX_NAME_CHARS,
  MAX_REASON_CHARS,
  MAX_TEXT_CHARS,
  Message,
  ModelSettings,
  ToolCall,
  ToolChoice,
  ToolMessage,
  ToolName,
  ToolResult,
  ToolSpec,
  Usage,
} from "./messages.js";
export { describeValue, notifier, notify, parseLimits } from "./option-errors.js";
export {
  countsTowardsQuarantine,
  Failure,
  FailureCode,
  type HookOutcome,
  MAX_STACK_FRAMES,
  QUARANTINE_CODES,
  ResultIssue,
  StackFrame,
} from "./outcome.js";
export * as results from "./results.js";
export {
  MAX_MARK_MATES,
  monotonicMs,
  RUNNING_MARK_BYTES,
  RUNNING_MARK_FD_ENV,
  type RunningMark,
  type RunningPhase,
  readRunningMark,
  writeRunningMark,
} from "./running-mark.js";
export {
  compileToolGlobs,
  globMatch,
  isToolPoint,
  MAX_TOOL_GLOB_CHARS,
  MAX_TOOL_GLOBS,
  TOOL_POINTS,
  ToolGlob,
  ToolGlobs,
  ToolMatchers,
  type ToolNameTest,
  type ToolPoint,
  toolNameOf,
} from "./tool-matchers.js";
export { SDK_VERSION } from "./version.js";
export { SandboxLimits, WorkerFailureCode, WorkerRequest, WorkerResponse } from "./wire.js";
export { isWorkerRequest, isWorkerResponse } from "./wire-guard.js";
