import type { OpenAICompatibleProvider } from "@ai-sdk/openai-compatible";
import { z } from "zod";
import { type Model, ModelError } from "../../agent/index.js";
import { modelOver } from "./model.js";
import { missing } from "./sdk.js";

/** Options of the OpenAI-compatible provider; each falls back to its environment variable. */
export interface OpenAIModelOptions {
  /** Default `ISOHOOK_OPENAI_BASE_URL`, then `OPENAI_BASE_URL`, then `https://api.openai.com/v1`. */
  readonly baseUrl?: string;
  /** Default `ISOHOOK_OPENAI_API_KEY`, then `OPENAI_API_KEY`; no `Authorization` header without one. */
  readonly apiKey?: string;
  /** Default `ISOHOOK_OPENAI_MODEL`; required one way or the other. */
  readonly model?: string;
  /** Per attempt: a whole reply, or a stream's start and each gap in it. Default 60 000 ms. */
  readonly timeoutMs?: number;
  /** Retries of a 408, 409, 429, 5xx or a failed connection, after `Retry-After` when given. Default 2. */
  readonly maxRetries?: number;
  /** The first retry's delay when the server names none; doubles per retry. Default 2,000 ms. */
  readonly retryDelayMs?: number;
  /** `false`: whole replies only (`stream: false` requests). Default `true`: the loop streams. */
  readonly stream?: boolean;
  /** Where the env fallbacks are read; default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const Options = z.strictObject({
  baseUrl: z.url({ protocol: /^https?$/, error: "Expected `baseUrl` to be an http(s) URL" }),
  apiKey: z.string().min(1).optional(),
  model: z.string().min(1, "Expected a model id: pass `model` or set ISOHOOK_OPENAI_MODEL"),
});

/**
 * A model behind an OpenAI-compatible `POST {baseUrl}/chat/completions` endpoint (OpenAI, vLLM, Ollama,
 * llama.cpp, LiteLLM…), through `@ai-sdk/openai-compatible` (loaded on the first call): streamed (SSE) by default, with the provider's retries. Failures reject with a `ModelError`: `model_auth` (401/403), `model_rejected` (other
 * 4xx), `model_unavailable` (429 and 5xx, once the retries are spent), `model_malformed_reply`,
 * `model_timeout`, `model_unreachable`; an abort rejects with the signal's reason.
 *
 * ```ts
 * const model = openAIModel({ baseUrl: "http://127.0.0.1:11434/v1", model: "qwen2.5" });
 * ```
 */
export function openAIModel(options: OpenAIModelOptions = {}): Model {
  const env = options.env ?? process.env;
  const parsed = Options.safeParse({
    baseUrl: options.baseUrl ?? env.ISOHOOK_OPENAI_BASE_URL ?? env.OPENAI_BASE_URL ?? "https://api.openai.com/v1",
    apiKey: options.apiKey ?? env.ISOHOOK_OPENAI_API_KEY ?? env.OPENAI_API_KEY,
    model: options.model ?? env.ISOHOOK_OPENAI_MODEL ?? "",
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ModelError(
      "model_config",
      `Invalid OpenAI-compatible model options: ${issue?.message ?? "unknown issue"}`,
    );
  }
  const { baseUrl, apiKey, model } = parsed.data;
  let provider: Promise<OpenAICompatibleProvider> | undefined;
  const load = () => {
    provider ??= import("@ai-sdk/openai-compatible").then(
      ({ createOpenAICompatible }) =>
        createOpenAICompatible({
          name: "openai-compatible",
          baseURL: baseUrl.replace(/\/+$/, ""),
          ...(apiKey === undefined ? {} : { apiKey }),
          includeUsage: true,
        }),
      (error: unknown) => {
        provider = undefined;
        throw missing("@ai-sdk/openai-compatible@3", error);
      },
    );
    return provider;
  };
  const { maxRetries, retryDelayMs, timeoutMs, stream } = options;
  return modelOver(model, async (id) => (await load()).chatModel(id), {
    keyHint: "OPENAI_API_KEY",
    ...(maxRetries === undefined ? {} : { maxRetries }),
    ...(retryDelayMs === undefined ? {} : { retryDelayMs }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(stream === undefined ? {} : { stream }),
  });
}
