import type { StopDecision } from "../dispatch/index.js";
import type { HookEvent } from "../protocol/index.js";
import { raceAbort } from "./abort.js";
import type { AgentEvent } from "./agent-events.js";
import type { Model, ModelReply, ModelRequest } from "./model.js";
import { ModelError } from "./model-error.js";
import { decide, type RunContext } from "./run-context.js";
import { StreamTap, type StreamWindow } from "./stream-tap.js";

/** How a model call ended: its reply, or a `model.stream` hook's stop. */
export type ModelCall =
  | { readonly type: "reply"; readonly reply: ModelReply }
  | { readonly type: "stopped"; readonly stop: StopDecision };

/**
 * Calls `model.stream` when the model has it (each delta to `model.delta` at once and to `model.stream`
 * hooks coalesced), else `model.complete`. Waits for the stream hooks' last window before it returns, so a
 * stop decided on the last tokens still stops the run; a stop mid-stream aborts the provider request.
 */
export async function callModel(
  run: RunContext,
  model: Model,
  request: ModelRequest,
  window: StreamWindow,
): Promise<ModelCall> {
  const { signal } = run;
  if (model.stream === undefined)
    return { type: "reply", reply: await raceAbort(model.complete(request, signal), signal) };
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const sink = { turn: run.turn, dispatch: (w: HookEvent<"model.stream">) => decide(run, "model.stream", w) };
  // Held deltas wait here until the hooks let their window pass; a stop drops the rest unseen.
  const held: AgentEvent[] = [];
  let released = 0;
  const release = (count: number) => {
    while (released < count) {
      const next = held.shift();
      if (next === undefined) return;
      released += 1;
      run.emit(next);
    }
  };
  const tap = new StreamTap(sink, window, controller, window.hold ? release : undefined);
  try {
    let reply: ModelReply | undefined;
    try {
      for await (const part of model.stream(request, controller.signal)) {
        if (part.type === "finish") {
          reply = part.reply;
          break;
        }
        const event: AgentEvent = {
          type: "model.delta",
          turn: run.turn,
          kind: part.kind,
          delta: part.delta,
          ...callIdOf(part),
        };
        if (window.hold && part.delta !== "") held.push(event);
        else run.emit(event);
        run.hooks.streamed?.(part);
        tap.push(part);
      }
    } catch (error) {
      // The stream ended because a hook stopped it: the stop is the outcome, the abort error is not.
      const stop = signal.aborted ? undefined : await tap.settle().catch(() => undefined);
      if (stop !== undefined) return { type: "stopped", stop };
      throw error;
    }
    const stop = await tap.settle();
    if (stop !== undefined) return { type: "stopped", stop };
    if (reply === undefined)
      throw new ModelError("model_malformed_reply", "The model's stream ended without a final reply. Retry the run.");
    return { type: "reply", reply };
  } finally {
    tap.dispose();
    signal.removeEventListener("abort", onAbort);
  }
}

function callIdOf(part: { readonly callId?: string }): { callId?: string } {
  return part.callId === undefined ? {} : { callId: part.callId };
}
