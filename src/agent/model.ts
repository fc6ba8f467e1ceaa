import type { z } from "zod";
import type { AssistantMessage, events, Message, ModelSettings, ToolSpec, Usage } from "../protocol/index.js";

export type FinishReason = z.infer<typeof events.FinishReason>;

/** One model call as the loop makes it, after every request-side hook has had its say. */
export interface ModelRequest {
  /** The model id to ask (a `model.request` patch may have changed it). */
  readonly model: string;
  /** The provider-bound transcript: system prompt first, then the conversation. */
  readonly messages: readonly Message[];
  /** The tools the model may call this turn, after `tools.prepare` and `activeTools`. */
  readonly tools: readonly ToolSpec[];
  readonly settings: ModelSettings;
}

/** What a model call produced. */
export interface ModelReply {
  readonly message: AssistantMessage;
  readonly usage: Usage;
  readonly finishReason: FinishReason;
  /**
   * Tool calls whose arguments the provider sent in a form that is no JSON object, by call id. Those
   * calls carry `args: {}` in `message` and go to `tool.invalid` with reason `badArgs`.
   */
  readonly malformedArgs?: Readonly<Record<string, string>>;
}

export type StreamKind = z.infer<typeof events.StreamKind>;

/** One piece of streamed output: text, reasoning, or a tool call's arguments (JSON text, by `callId`). */
export interface ModelDelta {
  readonly kind: StreamKind;
  readonly delta: string;
  /** Set for `toolArgs`: the call the arguments belong to. */
  readonly callId?: string;
}

/** What a streaming model yields: deltas as they arrive, then exactly one `finish` with the whole reply. */
export type ModelStreamPart =
  | ({ readonly type: "delta" } & ModelDelta)
  | { readonly type: "finish"; readonly reply: ModelReply };

/**
 * A language model the loop can call. Implementations never see hooks or tools, only the request.
 * `complete` rejects with a `ModelError` (or the abort reason when `signal` aborts); the loop turns the
 * rejection into the stop reason `error`, and every tool call already made still gets its result.
 */
export interface Model {
  /** The default model id, reported to `model.request` hooks; a request may name another. */
  readonly id: string;
  complete(request: ModelRequest, signal: AbortSignal): Promise<ModelReply>;
  /**
   * The streaming form, when the model has one: the loop prefers it. It yields deltas, then one `finish`;
   * it rejects like `complete`, and stops the provider request when `signal` aborts (a hook's `stop`, or
   * the run's abort).
   */
  stream?(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamPart>;
}
