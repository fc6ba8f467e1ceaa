import type { LanguageModelV4GenerateResult, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { MockLanguageModelV4 } from "ai/test";
import { ScriptedTurn, type ScriptedTurnInput } from "../../src/agent/index.js";

/**
 * isohook's scripted model as the AI SDK's own mock model (`ai/test`): the same turns, the same call ids
 * (`call_<turn>_<index>`), generated whole or streamed in small text deltas.
 */
export function scriptedLanguageModel(turns: readonly ScriptedTurnInput[], modelId = "scripted"): MockLanguageModelV4 {
  const script = turns.map((turn) => ScriptedTurn.parse(turn));
  let next = 0;
  const take = (): LanguageModelV4GenerateResult => {
    const index = next;
    const turn = script[index];
    if (turn === undefined) throw new Error(`the script has no turn ${index + 1}`);
    next += 1;
    const calls = turn.toolCalls.map((call, i) => ({
      type: "tool-call" as const,
      toolCallId: call.id ?? `call_${index + 1}_${i + 1}`,
      toolName: call.name,
      input: JSON.stringify(call.args),
    }));
    const text = turn.text === "" ? [] : [{ type: "text" as const, text: turn.text }];
    const usage = turn.usage ?? { inputTokens: 10, outputTokens: Math.ceil(turn.text.length / 4) };
    return {
      content: [...text, ...calls],
      finishReason: { unified: calls.length > 0 ? "tool-calls" : "stop", raw: undefined },
      usage: {
        inputTokens: { total: usage.inputTokens, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: usage.outputTokens, text: undefined, reasoning: undefined },
      },
      warnings: [],
    };
  };
  return new MockLanguageModelV4({
    modelId,
    doGenerate: async () => take(),
    doStream: async () => {
      const result = take();
      const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: [] }];
      for (const part of result.content) {
        if (part.type === "text") {
          parts.push({ type: "text-start", id: "t" });
          for (const delta of part.text.match(/.{1,4}/gs) ?? []) parts.push({ type: "text-delta", id: "t", delta });
          parts.push({ type: "text-end", id: "t" });
        } else if (part.type === "tool-call") parts.push(part);
      }
      parts.push({ type: "finish", finishReason: result.finishReason, usage: result.usage });
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
}
