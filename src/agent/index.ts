/**
 * The agent loop and what it drives: the scripted model (providers' models are in src/adapters/ai-sdk-model),
 * tools (zod or declared in data) and scenario files; the stream tap that feeds `model.stream`. The loop
 * calls every hook point through a dispatcher run scope.
 */
export { type Deadline, deadline } from "./abort.js";
export type { AgentEvent, AgentLoopResult, HooksDecidedEvent, StopReason } from "./agent-events.js";
export {
  ApprovalDecision,
  type ApprovalDecisions,
  decisionsProblem,
  type PausedBatch,
  type PausedRun,
  type PendingApproval,
} from "./approval.js";
export { type InboundMessage, Inbox, type RunInbox, type SendSource } from "./inbox.js";
export { type AgentLoopOptions, DEFAULT_MAX_TURNS, resumeAgentLoop, runAgentLoop } from "./loop.js";
export type {
  FinishReason,
  Model,
  ModelDelta,
  ModelReply,
  ModelRequest,
  ModelStreamPart,
  StreamKind,
} from "./model.js";
export { ModelError, type ModelErrorCode } from "./model-error.js";
export { dispatchReported } from "./run-context.js";
export {
  type LoadedScenario,
  loadScenario,
  MAX_SCENARIO_BYTES,
  parseScenario,
  Scenario,
  ScenarioError,
  type ScenarioInput,
  scenarioInbox,
  scenarioOfText,
} from "./scenario.js";
export { declaredTool, ToolDeclaration, type ToolDeclarationInput, ToolSchemaError } from "./scenario-tool.js";
export { ScriptedTurn, type ScriptedTurnInput, scriptedModel } from "./scripted-model.js";
export {
  DEFAULT_STREAM_WINDOW,
  type StreamSink,
  StreamTap,
  type StreamWindow,
  streamWindowOf,
} from "./stream-tap.js";
export { defineTool, type Tool, type ToolContext } from "./tool.js";
