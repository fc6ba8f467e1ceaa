import type { LanguageModelV4FinishReason, LanguageModelV4ToolCall, LanguageModelV4Usage } from "@ai-sdk/provider";
import { type FinishReason, ModelError, type ModelReply } from "../../agent/index.js";
import {
  isJsonValue,
  type JsonObject,
  MAX_NAME_CHARS,
  type ToolCall,
  ToolName,
  type Usage,
} from "../../protocol/index.js";

/**
 * A provider's reply in isohook's shape: the text, the tool calls the host runs (not the ones the provider
 * executed itself), usage and finish reason; arguments that are no JSON object are kept aside as
 * `malformedArgs`, for `tool.invalid`.
 */

/** A tool call's input as the model wrote it (JSON text): the object, or what is wrong with it. */
export function toolArgs(
  input: string,
): { readonly type: "args"; readonly args: JsonObject } | { readonly type: "malformed"; readonly problem: string } {
  if (input.trim() === "") return { type: "args", args: {} };
  let value: unknown;
  try {
    value = JSON.parse(input);
  } catch {
    return { type: "malformed", problem: "the arguments are not valid JSON" };
  }
  if (isJsonValue(value) && typeof value === "object" && value !== null && !Array.isArray(value))
    return { type: "args", args: value };
  return { type: "malformed", problem: "the arguments are JSON but no object" };
}

export function usageOf(usage: LanguageModelV4Usage): Usage {
  return { inputTokens: usage.inputTokens.total ?? 0, outputTokens: usage.outputTokens.total ?? 0 };
}

export function finishReasonOf(reason: LanguageModelV4FinishReason): FinishReason {
  switch (reason.unified) {
    case "tool-calls":
      return "toolCalls";
    case "length":
      return "length";
    case "error":
      return "error";
    default:
      return "stop";
  }
}

/** A provider's tool call id the protocol cannot carry (hooks read ids of 1 to 128 characters). */
export function checkCallId(where: string, id: string): void {
  if (id.length >= 1 && id.length <= MAX_NAME_CHARS) return;
  throw new ModelError(
    "model_malformed_reply",
    `${where} sent a tool call id of ${id.length} characters; ids must have 1 to ${MAX_NAME_CHARS}`,
  );
}

/** What a model call produced, folded into the reply the loop reads. */
export function replyOf(
  where: string,
  text: string,
  calls: readonly LanguageModelV4ToolCall[],
  usage: LanguageModelV4Usage,
  finish: LanguageModelV4FinishReason,
): ModelReply {
  const malformedArgs: Record<string, string> = {};
  const toolCalls: ToolCall[] = [];
  for (const call of calls) {
    if (call.providerExecuted === true) continue;
    if (!ToolName.safeParse(call.toolName).success)
      throw new ModelError(
        "model_malformed_reply",
        `${where} answered with a tool call named \`${call.toolName.slice(0, 80)}\`, which is no valid tool name`,
      );
    checkCallId(where, call.toolCallId);
    const parsed = toolArgs(call.input);
    if (parsed.type === "malformed") malformedArgs[call.toolCallId] = parsed.problem;
    toolCalls.push({ id: call.toolCallId, name: call.toolName, args: parsed.type === "args" ? parsed.args : {} });
  }
  const reply: ModelReply = {
    message:
      toolCalls.length > 0 ? { role: "assistant", content: text, toolCalls } : { role: "assistant", content: text },
    usage: usageOf(usage),
    finishReason: toolCalls.length > 0 ? "toolCalls" : finishReasonOf(finish),
  };
  return Object.keys(malformedArgs).length > 0 ? { ...reply, malformedArgs } : reply;
}
