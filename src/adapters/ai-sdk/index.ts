/**
 * `isohook/ai-sdk`: a tenant's sandboxed hooks over a Vercel AI SDK app's own `generateText`/`streamText`
 * loop, on a run opened with `runtime.openRun()`. The only place isohook imports `ai` and `@ai-sdk/*`.
 */
export { type AiSdkGuard, type GuardOptions, guardAiSdk } from "./guard.js";
export type { Halt } from "./state.js";
export { ToolRefusedError } from "./tools.js";
