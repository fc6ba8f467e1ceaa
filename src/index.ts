/**
 * isohook's public surface, listed name by name: what is not here is internal or lives on a named
 * subpath for specialists (`isohook/sandbox`, `isohook/admin`, `isohook/loop`, `isohook/schemas`,
 * `isohook/testing`, `isohook/hook-sdk`). The public surface is a security surface, so nothing is
 * re-exported wholesale. test/architecture.test.ts holds this file to 40 names, 25 of them values;
 * test/public-surface.test.ts lists each subpath's names.
 *
 * ```ts
 * import { createHookRuntime, defineTool, scriptedModel } from "isohook";
 *
 * const runtime = await createHookRuntime({ store: ".isohook/store.db" });
 * const result = await runtime.runAgent({ tenantId: "acme", input: "Clean up", tools, model: scriptedModel(turns) });
 * await runtime.close();
 * ```
 */

export { ExecutorClosedError, ExecutorOptionsError, SandboxStartError } from "../sandbox/supervisor/index.js";
export { openAIModel } from "./adapters/ai-sdk-model/index.js";
// Tools, models and scenarios.
export {
  declaredTool,
  defineTool,
  loadScenario,
  type Model,
  ModelError,
  type ModelReply,
  type ModelRequest,
  ScenarioError,
  scriptedModel,
  type Tool,
  type ToolContext,
  ToolSchemaError,
} from "./agent/index.js";
// What hooks decided, and the errors the runtime's parts throw.
export { BundleError } from "./bundler/index.js";
export { DispatchError, type HookRecord, type PlatformHooks, type PointDecision } from "./dispatch/index.js";
export { type FailureCode, HOOK_POINT_NAMES, type HookPoint } from "./protocol/index.js";
// The runtime: sandbox + hooks + bundles + agent loop, and where bundles come from.
export {
  bundleFromEntry,
  createHookRuntime,
  fixedBundleSource,
  formatRunEvent,
  type HookRuntime,
  type HookRuntimeOptions,
  type RunAgentOptions,
  type RunAgentResult,
  type RunEvent,
  RuntimeError,
  runTrace,
  type TraceOptions,
} from "./runtime/index.js";
// Bundle stores: `openStore` picks SQLite for a path, PostgreSQL for a postgres:// URL.
export { type BundleStore, MemoryBundleStore, openStore, StoreError } from "./store/index.js";
