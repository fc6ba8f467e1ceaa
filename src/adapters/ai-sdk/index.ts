/**
 * `isohook/ai-sdk`: a tenant's sandboxed hooks over a Vercel AI SDK app's own `generateText`/`streamText`
 * loop, on a run opened with `runtime.openRun()`; and any AI SDK language model as the model of isohook's
 * own loop (`aiSdkModel`). The only place isohook imports `ai`.
 */
export { type AiSdkModelOptions, aiSdkModel, type OpenAIModelOptions } from "../ai-sdk-model/index.js";
export { type AiSdkGuard, type GuardOptions, guardAiSdk } from "./guard.js";
export type { Halt } from "./state.js";
export { ToolRefusedError } from "./tools.js";
