import type {
  LanguageModelV4,
  LanguageModelV4FinishReason,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolCall,
  LanguageModelV4Usage,
} from "@ai-sdk/provider";
import {
  type Deadline,
  deadline,
  type Model,
  type ModelDelta,
  ModelError,
  type ModelReply,
  type ModelRequest,
  type ModelStreamPart,
} from "../../agent/index.js";
import { detail, type ErrorContext, innermost, modelErrorOf, type RetryOptions, withRetries } from "./errors.js";
import { callOptionsOf } from "./prompt.js";
import { checkCallId, replyOf } from "./reply.js";
import { type ProviderSdk, providerSdk } from "./sdk.js";

/** How `aiSdkModel` calls the provider; every field has a default. */
export interface AiSdkModelOptions {
  /**
   * Models a `model.request` hook may switch to, by id. A request for an id that is neither the model's own
   * nor here fails with `model_config`.
   */
  readonly models?: Readonly<Record<string, LanguageModelV4>>;
  /** Retries of a failed call the provider marks retryable (429, 5xx, connection failures). Default 2. */
  readonly maxRetries?: number;
  /** The first retry's delay when the server names none (`Retry-After`); doubles per retry. Default 2,000 ms. */
  readonly retryDelayMs?: number;
  /**
   * Per attempt: a whole reply for `complete`; for `stream`, the wait for the stream to start and between
   * two parts of it. Default 60,000 ms.
   */
  readonly timeoutMs?: number;
  /** `false`: the loop calls `doGenerate` only (no deltas). Default `true`. */
  readonly stream?: boolean;
  /** What an error tells the user to check when the provider refuses the key. Default "the provider's API key". */
  readonly keyHint?: string;
}

/**
 * Any AI SDK language model (`@ai-sdk/provider` spec v4: OpenAI, Anthropic, Google, Bedrock, a local
 * server…) as the model of isohook's loop. It streams text, reasoning and tool-call arguments (so
 * `model.stream` hooks see them and a stop aborts the provider request), retries what the provider marks
 * retryable (honouring `Retry-After`), and rejects with a `ModelError` that names the status and what to
 * check; an abort rejects with the signal's reason.
 *
 * ```ts
 * import { anthropic } from "@ai-sdk/anthropic";
 * import { aiSdkModel } from "isohook/ai-sdk";
 * const result = await runtime.runAgent({ tenantId: "acme", input, tools, model: aiSdkModel(anthropic("claude-sonnet-4-5")) });
 * ```
 */
export function aiSdkModel(model: LanguageModelV4, options: AiSdkModelOptions = {}): Model {
  const models = options.models ?? {};
  return modelOver(model.modelId, (id) => (id === model.modelId ? model : models[id]), options);
}

const DEFAULTS = { maxRetries: 2, retryDelayMs: 2_000, timeoutMs: 60_000 } as const;

/**
 * `aiSdkModel` over a resolver of model ids (a provider can make any id; a fixed set cannot), which may
 * load the provider package first.
 */
export function modelOver(
  id: string,
  resolve: (id: string) => LanguageModelV4 | undefined | Promise<LanguageModelV4 | undefined>,
  options: Omit<AiSdkModelOptions, "models">,
): Model {
  const retries: RetryOptions = {
    maxRetries: checked("maxRetries", options.maxRetries ?? DEFAULTS.maxRetries, 0, 10),
    retryDelayMs: checked("retryDelayMs", options.retryDelayMs ?? DEFAULTS.retryDelayMs, 0, 60_000),
  };
  const timeoutMs = checked("timeoutMs", options.timeoutMs ?? DEFAULTS.timeoutMs, 1, 600_000);
  const keyHint = options.keyHint ?? "the provider's API key";
  const target = async (request: ModelRequest) => {
    const model = await resolve(request.model);
    if (model === undefined)
      throw new ModelError(
        "model_config",
        `No model \`${request.model.slice(0, 128)}\`: a model.request hook asked for it; pass it in aiSdkModel's \`models\``,
      );
    return { model, context: { label: `${model.provider} model ${model.modelId}`, keyHint } };
  };

  const complete = async (request: ModelRequest, signal: AbortSignal): Promise<ModelReply> => {
    signal.throwIfAborted();
    const { model, context } = await target(request);
    const result = await withRetries(
      () => attempt(context, signal, timeoutMs, (s) => model.doGenerate(callOptionsOf(request, s))),
      retries,
      context,
      signal,
    );
    const text = result.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
    const calls = result.content.filter((part) => part.type === "tool-call");
    return replyOf(context.label, text, calls, result.usage, result.finishReason);
  };

  async function* stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamPart> {
    signal.throwIfAborted();
    const { model, context } = await target(request);
    const sdk = await providerSdk();
    // Each attempt gets its own idle limit, so a retry's backoff never counts as a silent stream.
    const idle: { current: Deadline | undefined } = { current: undefined };
    let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | undefined;
    try {
      const started = await withRetries(
        () =>
          attempt(context, signal, timeoutMs, (s) => {
            idle.current?.dispose();
            idle.current = deadline(signal, timeoutMs);
            return model.doStream(callOptionsOf(request, AbortSignal.any([s, idle.current.signal])));
          }),
        retries,
        context,
        signal,
      );
      const limit = idle.current;
      limit?.restart();
      reader = started.stream.getReader();
      const fold = new Fold();
      for (;;) {
        const read = await reader.read().catch((error: unknown) => {
          throw streamFailure(sdk, error, signal, limit?.timedOut() === true, timeoutMs, context);
        });
        if (read.done) break;
        limit?.restart();
        const delta = fold.add(sdk, read.value, context);
        if (delta !== undefined) yield delta;
      }
      yield { type: "finish", reply: fold.reply(context) };
    } finally {
      idle.current?.dispose();
      // Early exit (a hook's stop, an error, a consumer that stopped reading): end the provider request.
      reader?.cancel().catch(() => {});
    }
  }

  return options.stream === false ? { id, complete } : { id, complete, stream };
}

/** One try with its own timeout: the timeout is a `ModelError` (not retried), the rest is the provider's. */
async function attempt<T>(
  context: ErrorContext,
  signal: AbortSignal,
  timeoutMs: number,
  call: (signal: AbortSignal) => PromiseLike<T>,
): Promise<T> {
  const limit = deadline(signal, timeoutMs);
  try {
    return await call(limit.signal);
  } catch (error) {
    if (limit.timedOut() && !signal.aborted)
      throw new ModelError(
        "model_timeout",
        `${context.label} did not answer within ${timeoutMs} ms; raise \`timeoutMs\` or check the server`,
      );
    throw error;
  } finally {
    limit.dispose();
  }
}

function streamFailure(
  sdk: ProviderSdk,
  error: unknown,
  signal: AbortSignal,
  timedOut: boolean,
  timeoutMs: number,
  context: ErrorContext,
): unknown {
  if (signal.aborted) return signal.reason;
  if (timedOut)
    return new ModelError(
      "model_timeout",
      `${context.label} sent nothing for ${timeoutMs} ms mid-stream; raise \`timeoutMs\` or check the server`,
    );
  const mapped = modelErrorOf(sdk, error, context, 1);
  if (mapped.code !== "model_unreachable") return mapped;
  return new ModelError(
    "model_unreachable",
    `The stream from ${context.label} broke off before its end (${detail(innermost(error))}); the reply is incomplete. Retry the run`,
    { cause: error },
  );
}

/** An `error` part: the provider's own report mid-stream (e.g. overloaded), unless it is a reply it could not read. */
function streamError(sdk: ProviderSdk, error: unknown, context: ErrorContext): ModelError {
  const mapped = modelErrorOf(sdk, error, context, 1);
  if (mapped.code !== "model_unreachable") return mapped;
  return new ModelError(
    "model_unavailable",
    `${context.label} reported an error mid-stream: ${detail(innermost(error))}. Retry the run`,
    { cause: error },
  );
}

/** A provider's stream part as isohook's delta (text, reasoning, a tool call's arguments), if it is one. */
export function deltaOf(part: LanguageModelV4StreamPart): ModelDelta | undefined {
  switch (part.type) {
    case "text-delta":
      return { kind: "text", delta: part.delta };
    case "reasoning-delta":
      return { kind: "reasoning", delta: part.delta };
    case "tool-input-delta":
      return { kind: "toolArgs", delta: part.delta, callId: part.id };
    default:
      return undefined;
  }
}

/** A stream's parts folded into its reply, handing back the deltas the loop passes on. */
class Fold {
  #text = "";
  readonly #calls: LanguageModelV4ToolCall[] = [];
  #finish: { usage: LanguageModelV4Usage; finishReason: LanguageModelV4FinishReason } | undefined;

  add(sdk: ProviderSdk, part: LanguageModelV4StreamPart, context: ErrorContext): ModelStreamPart | undefined {
    const delta = deltaOf(part);
    if (delta?.callId !== undefined) checkCallId(context.label, delta.callId);
    if (delta !== undefined) {
      if (delta.kind === "text") this.#text += delta.delta;
      return { type: "delta", ...delta };
    }
    switch (part.type) {
      case "tool-call":
        this.#calls.push(part);
        return undefined;
      case "finish":
        this.#finish = part;
        return undefined;
      case "error":
        throw streamError(sdk, part.error, context);
      default:
        return undefined;
    }
  }

  reply(context: ErrorContext): ModelReply {
    if (this.#finish === undefined)
      throw new ModelError(
        "model_malformed_reply",
        `The stream from ${context.label} ended without its finish part; the reply is incomplete. Retry the run`,
      );
    return replyOf(context.label, this.#text, this.#calls, this.#finish.usage, this.#finish.finishReason);
  }
}

function checked(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max)
    throw new ModelError(
      "model_config",
      `Expected \`${name}\` to be an integer from ${min} to ${max}, got \`${value}\``,
    );
  return value;
}
