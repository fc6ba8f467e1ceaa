import { setTimeout } from "node:timers/promises";
import { z } from "zod";
import { JsonObject, type Message, ToolName, Usage } from "../protocol/index.js";
import type { Model, ModelDelta, ModelReply, ModelRequest, ModelStreamPart } from "./model.js";
import { ModelError } from "./model-error.js";

/**
 * One scripted model turn: its text and the tool calls it makes. A turn with `chunks` or `reasoning`
 * streams: reasoning first, then the text chunk by chunk, then each tool call's arguments as JSON in
 * slices, `chunkMs` apart (the pace of a provider); a turn without them answers whole.
 */
export const ScriptedTurn = z.strictObject({
  text: z.string().default(""),
  /** The text as streamed pieces; `text` is their concatenation when unset. */
  chunks: z.array(z.string()).max(100_000).optional(),
  /** Reasoning deltas streamed before the text (not part of the reply message). */
  reasoning: z.array(z.string()).max(100_000).optional(),
  /** Milliseconds between streamed pieces. Default 0. */
  chunkMs: z.number().int().min(0).max(10_000).default(0),
  toolCalls: z
    .array(
      z.strictObject({
        /** Defaults to `call_<turn>_<index>`. */
        id: z.string().min(1).max(128).optional(),
        name: ToolName,
        args: JsonObject.default({}),
      }),
    )
    .max(64)
    .default([]),
  /** Defaults to a deterministic estimate (characters / 4). */
  usage: Usage.optional(),
});
export type ScriptedTurn = z.infer<typeof ScriptedTurn>;
export type ScriptedTurnInput = z.input<typeof ScriptedTurn>;

/**
 * The embedded default model: replays `turns` in order, one per call (retries included), so a run is
 * reproducible without a provider. Past the last turn it rejects with `script_exhausted`. `start` skips the turns a resumed run used before it paused.
 *
 * ```ts
 * const model = scriptedModel([{ toolCalls: [{ name: "shell", args: { command: "ls" } }] }, { text: "Done." }]);
 * ```
 */
export function scriptedModel(
  turns: readonly ScriptedTurnInput[],
  options: { id?: string; start?: number } = {},
): Model {
  const script = turns.map((turn) => ScriptedTurn.parse(turn));
  // A resumed run goes on where its model was: `start` is the checkpoint's count of model calls.
  let next = options.start ?? 0;
  const take = (request: ModelRequest, signal: AbortSignal) => {
    signal.throwIfAborted();
    const index = next;
    const turn = script[index];
    if (turn === undefined) {
      throw new ModelError(
        "script_exhausted",
        `The scripted model has no turn ${index + 1}: its script has ${script.length}. ` +
          "Add a turn to the scenario's `model.turns`, or end the run earlier (a final turn without tool calls ends it).",
      );
    }
    next += 1;
    return { turn, reply: replyOf(turn, index, request) };
  };
  return {
    id: options.id ?? "scripted",
    async complete(request: ModelRequest, signal: AbortSignal): Promise<ModelReply> {
      return take(request, signal).reply;
    },
    async *stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelStreamPart> {
      const { turn, reply } = take(request, signal);
      for (const delta of deltasOf(turn, reply)) {
        if (turn.chunkMs > 0) await setTimeout(turn.chunkMs, undefined, { signal });
        signal.throwIfAborted();
        yield { type: "delta", ...delta };
      }
      yield { type: "finish", reply };
    },
  };
}

function replyOf(turn: ScriptedTurn, index: number, request: ModelRequest): ModelReply {
  const text = turn.chunks === undefined ? turn.text : turn.chunks.join("");
  const toolCalls = turn.toolCalls.map((call, i) => ({
    id: call.id ?? `call_${index + 1}_${i + 1}`,
    name: call.name,
    args: call.args,
  }));
  const message =
    toolCalls.length > 0
      ? { role: "assistant" as const, content: text, toolCalls }
      : { role: "assistant" as const, content: text };
  return {
    message,
    usage: turn.usage ?? { inputTokens: estimateTokens(request.messages), outputTokens: Math.ceil(text.length / 4) },
    finishReason: toolCalls.length > 0 ? "toolCalls" : "stop",
  };
}

/** A tool call's arguments stream as JSON in slices of this many characters. */
const ARGS_SLICE = 16;

function* deltasOf(turn: ScriptedTurn, reply: ModelReply): Iterable<ModelDelta> {
  if (turn.chunks === undefined && turn.reasoning === undefined) return;
  for (const delta of turn.reasoning ?? []) yield { kind: "reasoning", delta };
  for (const delta of turn.chunks ?? [reply.message.content]) if (delta !== "") yield { kind: "text", delta };
  for (const call of reply.message.toolCalls ?? []) {
    const json = JSON.stringify(call.args);
    for (let at = 0; at < json.length; at += ARGS_SLICE)
      yield { kind: "toolArgs", delta: json.slice(at, at + ARGS_SLICE), callId: call.id };
  }
}

function estimateTokens(messages: readonly Message[]): number {
  let chars = 0;
  for (const message of messages) chars += message.content.length;
  return Math.ceil(chars / 4);
}
