import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Middleware,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import { type StreamWindow, streamWindowOf } from "../../agent/index.js";
import { finishReasonOf, usageOf } from "../ai-sdk-model/index.js";
import {
  assistantMessage,
  foldParts,
  patchParams,
  replyContent,
  requestEvent,
  resultParts,
  syntheticResult,
} from "./messages.js";
import type { GuardState } from "./state.js";
import { readStream } from "./stream.js";

/** What the middleware needs beyond the run: models a `model.request` patch may switch to, by id. */
export interface MiddlewareOptions {
  readonly models?: Readonly<Record<string, LanguageModelV4>>;
  /** `model.response` retries of one step before its last reply is kept. Default 2. */
  readonly maxRetries?: number;
  /**
   * How a streamed call's deltas are coalesced for `model.stream` hooks (`streamText`); default
   * `DEFAULT_STREAM_WINDOW` (100 ms or 400 characters).
   */
  readonly streamWindow?: Partial<StreamWindow>;
}

/** One model call's reply; `parts` is the stream it came from when nothing replaced it. */
interface Reply {
  readonly result: LanguageModelV4GenerateResult;
  readonly parts?: readonly LanguageModelV4StreamPart[];
}

const EMPTY = { role: "assistant", content: "" } as const;

/**
 * `model.request` and `model.response` around every model call of the wrapped model. A streamed call is
 * read to its end before `model.response` decides (a hook may replace or retry it), then replayed.
 */
export function hookMiddleware(state: GuardState, options: MiddlewareOptions): LanguageModelV4Middleware {
  const window = streamWindowOf(options.streamWindow);
  return {
    specificationVersion: "v4",
    wrapGenerate: async ({ model, params }) =>
      (await guardedCall(state, options, model, params, "generate", window)).result,
    wrapStream: async ({ model, params }) => {
      const reply = await guardedCall(state, options, model, params, "stream", window);
      return { stream: streamOf(reply.parts ?? resultParts(reply.result)) };
    },
  };
}

async function guardedCall(
  state: GuardState,
  options: MiddlewareOptions,
  model: LanguageModelV4,
  original: LanguageModelV4CallOptions,
  kind: "generate" | "stream",
  window: StreamWindow,
): Promise<Reply> {
  if (state.halt !== undefined) return { result: syntheticResult(EMPTY) };
  if (!state.turnOpen) state.nextTurn();
  state.turnOpen = false;
  const { run, signal } = state;
  let params = original;
  for (let retries = 0; ; retries += 1) {
    const event = requestEvent(state.turn, model.modelId, params);
    const { decision: request } = await run.dispatch("model.request", event, { signal });
    if (request.type === "stop") {
      state.stop(request.reason);
      return { result: syntheticResult(EMPTY) };
    }
    let reply: Reply;
    if (request.type === "respond") reply = { result: syntheticResult(request.message) };
    else {
      const target = (request.patch.model && options.models?.[request.patch.model]) || model;
      const called = await callModel(state, window, target, patchParams(params, request.patch), kind);
      if (called === undefined) return { result: syntheticResult(EMPTY) };
      reply = called;
    }
    const usage = usageOf(reply.result.usage);
    state.addUsage(usage);
    const message = assistantMessage(reply.result.content);
    const hasToolCalls = (message.toolCalls?.length ?? 0) > 0;
    const responseEvent = { message, usage, finishReason: finishReasonOf(reply.result.finishReason), hasToolCalls };
    const { decision: response } = await run.dispatch("model.response", responseEvent, { signal });
    switch (response.type) {
      case "stop":
        state.stop(response.reason);
        return { result: syntheticResult(EMPTY) };
      case "accept": {
        const calls = response.message.toolCalls ?? [];
        for (const [index, call] of calls.entries()) state.batches.set(call.id, { index, size: calls.length });
        if (!response.replaced) return reply;
        const content = replyContent(response.message);
        const unified = calls.length > 0 ? "tool-calls" : "stop";
        return { result: { ...reply.result, content, finishReason: { unified, raw: undefined } } };
      }
      case "retry":
        if (retries >= (options.maxRetries ?? 2)) return reply;
        // As in isohook's loop: the rejected answer stays in the prompt so the feedback makes sense.
        if (response.feedback !== undefined)
          params = {
            ...params,
            prompt: [
              ...params.prompt,
              { role: "assistant", content: [{ type: "text", text: message.content }] },
              { role: "user", content: [{ type: "text", text: response.feedback }] },
            ],
          };
        state.nextTurn();
        break;
      default: {
        const never: never = response;
        return never;
      }
    }
  }
}

/** The model's reply; `undefined` when a `model.stream` hook stopped the run mid-stream. */
async function callModel(
  state: GuardState,
  window: StreamWindow,
  model: LanguageModelV4,
  params: LanguageModelV4CallOptions,
  kind: "generate" | "stream",
): Promise<Reply | undefined> {
  if (kind === "generate") return { result: await model.doGenerate(params) };
  const parts = await readStream(state, window, model, params);
  return parts === undefined ? undefined : { result: foldParts(parts), parts };
}

function streamOf(parts: readonly LanguageModelV4StreamPart[]): ReadableStream<LanguageModelV4StreamPart> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}
