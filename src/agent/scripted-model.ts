import { z } from "zod";
import { JsonObject, type Message, ToolName, Usage } from "../protocol/index.js";
import type { Model, ModelReply, ModelRequest } from "./model.js";
import { ModelError } from "./model-error.js";

/** One scripted model turn: its text and the tool calls it makes. */
export const ScriptedTurn = z.strictObject({
  text: z.string().default(""),
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
  return {
    id: options.id ?? "scripted",
    async complete(request: ModelRequest, signal: AbortSignal): Promise<ModelReply> {
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
      const toolCalls = turn.toolCalls.map((call, i) => ({
        id: call.id ?? `call_${index + 1}_${i + 1}`,
        name: call.name,
        args: call.args,
      }));
      const message =
        toolCalls.length > 0
          ? { role: "assistant" as const, content: turn.text, toolCalls }
          : { role: "assistant" as const, content: turn.text };
      return {
        message,
        usage: turn.usage ?? {
          inputTokens: estimateTokens(request.messages),
          outputTokens: Math.ceil(turn.text.length / 4),
        },
        finishReason: toolCalls.length > 0 ? "toolCalls" : "stop",
      };
    },
  };
}

function estimateTokens(messages: readonly Message[]): number {
  let chars = 0;
  for (const message of messages) chars += message.content.length;
  return Math.ceil(chars / 4);
}
