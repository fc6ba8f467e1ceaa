/**
 * isohook's public surface, listed name by name: what is not here is internal. The public surface is a
 * security surface, so nothing is re-exported wholesale.
 *
 * ```ts
 * import { createHookRuntime, defineTool, scriptedModel } from "isohook";
 *
 * const runtime = await createHookRuntime({ store: ".isohook/store.db" });
 * const result = await runtime.runAgent({ tenantId: "acme", input: "Clean up", tools, model: scriptedModel(turns) });
 * await runtime.close();
 * ```
 */

// The sandbox: the one executor factory host code uses.
export {
  createHookExecutor,
  ExecutorClosedError,
  type ExecutorOptions,
  ExecutorOptionsError,
  SandboxStartError,
  type SupervisorEvent,
} from "../sandbox/supervisor/index.js";

// The agent loop, models, tools and scenarios.
export {
  type AgentEvent,
  type AgentLoopOptions,
  type AgentRunResult,
  DEFAULT_MAX_TURNS,
  declaredTool,
  defineTool,
  type FinishReason,
  type HooksDecidedEvent,
  type LoadedScenario,
  loadScenario,
  type Model,
  ModelError,
  type ModelErrorCode,
  type ModelReply,
  type ModelRequest,
  type OpenAIModelOptions,
  openAIModel,
  parseScenario,
  runAgentLoop,
  Scenario,
  ScenarioError,
  type ScenarioInput,
  ScriptedTurn,
  type ScriptedTurnInput,
  type StopReason,
  scriptedModel,
  type Tool,
  type ToolContext,
  ToolDeclaration,
  type ToolDeclarationInput,
  ToolSchemaError,
} from "./agent/index.js";
// Bundling, the deploy gate and fixtures.
export {
  type BuiltBundle,
  BundleError,
  type BundleErrorCode,
  buildBundle,
  bundleHook,
  describeBundle,
  type HookBundle,
} from "./bundler/index.js";
// Dispatch: stacking, failure policy, quarantine, budgets, provenance.
export {
  createDispatcher,
  DEFAULT_POLICY,
  type DecidedBy,
  DispatchError,
  type DispatchErrorCode,
  type DispatchEvent,
  type Dispatched,
  type Dispatcher,
  type DispatcherOptionsInput,
  type FailurePolicy,
  type HookCalledEvent,
  type HookRecord,
  type HookSource,
  type OpenRunOptions,
  type PlatformHandler,
  type PlatformHandlers,
  type PlatformHookContext,
  type PlatformHooks,
  type PointDecision,
  type PolicyMap,
  type QuarantineEnteredEvent,
  type QuarantineExitedEvent,
  type RunDispatcher,
} from "./dispatch/index.js";
export { type Fixture, type FixtureReport, parseFixtures, runFixtures } from "./fixtures/index.js";
export { type DeployResult, deployHook, type GateReport, runDeployGate } from "./gate/index.js";
// The hook protocol: points, events, results, limits, ids.
export {
  type ActiveBundle,
  BundleHash,
  BundleManifest,
  type BundleSource,
  DEFAULT_LIMITS,
  Failure,
  FailureCode,
  HOOK_POINT_NAMES,
  HOOK_POINTS,
  type HookCall,
  HookContext,
  type HookEvent,
  type HookExecutor,
  HookId,
  type HookOutcome,
  type HookPoint,
  type HookResult,
  JsonObject,
  JsonValue,
  Limits,
  type LimitsInput,
  Message,
  RunId,
  SDK_VERSION,
  TenantId,
  ToolCall,
  ToolResult,
  ToolSpec,
  Usage,
} from "./protocol/index.js";
// The runtime: executor + dispatcher + bundle source + agent loop.
export {
  bundleFromEntry,
  createHookRuntime,
  type EntryBundleOptions,
  fixedBundleSource,
  formatRunEvent,
  type HookRuntime,
  type HookRuntimeOptions,
  type RunAgentOptions,
  type RunAgentResult,
  type RunEvent,
  type RunStartedEvent,
  RuntimeError,
  type RuntimeErrorCode,
  type RuntimeEvent,
  type RunWarning,
  type RunWarningEvent,
  runTrace,
  type TraceOptions,
} from "./runtime/index.js";
// The bundle store.
export {
  type BundleStore,
  MemoryBundleStore,
  SqliteBundleStore,
  StoreError,
  type StoreErrorCode,
} from "./store/index.js";
