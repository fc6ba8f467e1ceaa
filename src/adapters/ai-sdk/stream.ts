import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { StreamTap, type StreamWindow } from "../../agent/index.js";
import type { HookEvent } from "../../protocol/index.js";
import { deltaOf } from "../ai-sdk-model/index.js";
import type { GuardState } from "./state.js";

/**
 * One streamed model call of the SDK's loop, read to its end while its text, reasoning and tool-input
 * deltas pass through `model.stream` (coalesced, off the stream's path, as in isohook's own loop). A
 * hook's stop aborts the provider request and halts the run: the parts are then `undefined`.
 */
export async function readStream(
  state: GuardState,
  window: StreamWindow,
  model: LanguageModelV4,
  params: LanguageModelV4CallOptions,
): Promise<LanguageModelV4StreamPart[] | undefined> {
  const controller = new AbortController();
  const caller = params.abortSignal;
  const abortSignal = caller === undefined ? controller.signal : AbortSignal.any([caller, controller.signal]);
  const sink = {
    turn: state.turn,
    dispatch: (event: HookEvent<"model.stream">) => state.run.dispatch("model.stream", event, { signal: state.signal }),
  };
  const tap = new StreamTap(sink, window, controller);
  const parts: LanguageModelV4StreamPart[] = [];
  try {
    try {
      const { stream } = await model.doStream({ ...params, abortSignal });
      const reader = stream.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        parts.push(read.value);
        const delta = deltaOf(read.value);
        if (delta === undefined) continue;
        state.run.streamed(delta);
        tap.push(delta);
      }
    } catch (error) {
      // The stream ended because a hook stopped it: the stop is the outcome, the abort error is not.
      const stop = caller?.aborted ? undefined : await tap.settle().catch(() => undefined);
      if (stop === undefined) throw error;
      state.stop(stop.reason);
      return undefined;
    }
    const stop = await tap.settle();
    if (stop === undefined) return parts;
    state.stop(stop.reason);
    return undefined;
  } finally {
    tap.dispose();
  }
}
