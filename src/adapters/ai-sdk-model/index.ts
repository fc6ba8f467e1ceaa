/**
 * AI SDK language models (`@ai-sdk/provider` spec v4) as isohook's `Model`: `aiSdkModel` for any provider
 * package, `openAIModel` over `@ai-sdk/openai-compatible`. With the guard adapter (src/adapters/ai-sdk),
 * the only place isohook imports `@ai-sdk/*`; it never imports `ai`.
 */
export { type AiSdkModelOptions, aiSdkModel, deltaOf } from "./model.js";
export { type OpenAIModelOptions, openAIModel } from "./openai-model.js";
export { finishReasonOf, toolArgs, usageOf } from "./reply.js";
