import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from "@ai-sdk/provider";
import type { ModelRequestPatch } from "../../dispatch/index.js";
import {
  type AssistantMessage,
  isJsonValue,
  type JsonObject,
  MAX_TEXT_CHARS,
  type ToolCall,
  type ToolResult,
} from "../../protocol/index.js";
import { toolArgs } from "../ai-sdk-model/index.js";

/**
 * The edge between the AI SDK's language-model shapes (provider spec v4) and isohook's messages: what a hook
 * sees of a model call and its reply, and how a hook's decision goes back into the SDK's shapes.
 */

/** A tool call's input as the model wrote it (a JSON string); anything but a JSON object becomes `{}`. */
function argsOf(input: string): JsonObject {
  const parsed = toolArgs(input);
  return parsed.type === "args" ? parsed.args : {};
}

/** Text a hook may read: capped at the protocol's message size, the cut marked. */
export function capText(text: string): string {
  return text.length <= MAX_TEXT_CHARS ? text : `${text.slice(0, MAX_TEXT_CHARS - 14)}…[truncated]`;
}

/** The reply's text and tool calls, as the assistant message `model.response` and `turn.end` hooks read. */
export function assistantMessage(content: readonly LanguageModelV4Content[]): AssistantMessage {
  const text = content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("");
  const toolCalls: ToolCall[] = content.flatMap((part) =>
    part.type === "tool-call" && part.providerExecuted !== true
      ? [{ id: part.toolCallId, name: part.toolName, args: argsOf(part.input) }]
      : [],
  );
  return toolCalls.length > 0
    ? { role: "assistant", content: capText(text), toolCalls }
    : { role: "assistant", content: capText(text) };
}

/** A hook's message as the model's reply: its text, then its tool calls. */
export function replyContent(message: AssistantMessage): LanguageModelV4Content[] {
  const content: LanguageModelV4Content[] = message.content === "" ? [] : [{ type: "text", text: message.content }];
  for (const call of message.toolCalls ?? [])
    content.push({ type: "tool-call", toolCallId: call.id, toolName: call.name, input: JSON.stringify(call.args) });
  return content;
}

/** A reply no model made (a hook's `respond`, or a stopped run's empty one), with zero usage. */
export function syntheticResult(message: AssistantMessage): LanguageModelV4GenerateResult {
  const calls = (message.toolCalls?.length ?? 0) > 0;
  return {
    content: replyContent(message),
    finishReason: { unified: calls ? "tool-calls" : "stop", raw: undefined },
    usage: {
      inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 0, text: 0, reasoning: 0 },
    },
    warnings: [],
  };
}

/** A generate result replayed as the parts `doStream` yields (whole text in one delta). */
export function resultParts(result: LanguageModelV4GenerateResult): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [{ type: "stream-start", warnings: result.warnings }];
  result.content.forEach((part, index) => {
    if (part.type === "text") {
      const id = `text-${index}`;
      parts.push({ type: "text-start", id }, { type: "text-delta", id, delta: part.text }, { type: "text-end", id });
    } else if (part.type === "tool-call") parts.push(part);
  });
  parts.push({ type: "finish", finishReason: result.finishReason, usage: result.usage });
  return parts;
}

/** The parts of a finished stream folded into the result `doGenerate` would have returned. */
export function foldParts(parts: readonly LanguageModelV4StreamPart[]): LanguageModelV4GenerateResult {
  const content: LanguageModelV4Content[] = [];
  const texts = new Map<string, { type: "text"; text: string }>();
  let finish: (LanguageModelV4StreamPart & { type: "finish" }) | undefined;
  for (const part of parts) {
    if (part.type === "text-start") {
      const text = { type: "text" as const, text: "" };
      texts.set(part.id, text);
      content.push(text);
    } else if (part.type === "text-delta") {
      const text = texts.get(part.id);
      if (text) text.text += part.delta;
    } else if (part.type === "tool-call") content.push(part);
    else if (part.type === "finish") finish = part;
  }
  const usage = finish?.usage ?? syntheticResult({ role: "assistant", content: "" }).usage;
  return { content, finishReason: finish?.finishReason ?? { unified: "other", raw: undefined }, usage, warnings: [] };
}

/** The event `model.request` hooks read for one model call. */
export function requestEvent(turn: number, modelId: string, params: LanguageModelV4CallOptions) {
  const choice = params.toolChoice;
  const toolChoice =
    choice === undefined ? undefined : choice.type === "tool" ? { name: choice.toolName } : choice.type;
  return {
    turn,
    model: modelId.slice(0, 128),
    settings: {
      ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
      ...(params.maxOutputTokens === undefined ? {} : { maxTokens: params.maxOutputTokens }),
      ...(toolChoice === undefined ? {} : { toolChoice }),
    },
    messageCount: params.prompt.length,
  };
}

/** A `model.request` patch applied to the call: settings, the tools offered, and a system addition. */
export function patchParams(params: LanguageModelV4CallOptions, patch: ModelRequestPatch): LanguageModelV4CallOptions {
  const next: LanguageModelV4CallOptions = { ...params };
  if (patch.temperature !== undefined) next.temperature = patch.temperature;
  if (patch.maxTokens !== undefined) next.maxOutputTokens = patch.maxTokens;
  if (patch.toolChoice !== undefined)
    next.toolChoice =
      typeof patch.toolChoice === "string"
        ? { type: patch.toolChoice }
        : { type: "tool", toolName: patch.toolChoice.name };
  if (patch.activeTools !== undefined && params.tools !== undefined) {
    const active = new Set(patch.activeTools);
    next.tools = params.tools.filter((tool) => tool.type !== "function" || active.has(tool.name));
  }
  if (patch.system !== undefined) {
    // As in isohook's loop: appended to the leading system message, or one is added.
    const [first, ...rest] = params.prompt;
    next.prompt =
      first?.role === "system"
        ? [{ ...first, content: `${first.content}\n\n${patch.system}` }, ...rest]
        : [{ role: "system", content: patch.system }, ...params.prompt];
  }
  return next;
}

/** What a tool returned, as the tool result `tool.result` hooks read. */
export function toolResultOf(output: unknown): ToolResult {
  if (typeof output === "string") return { content: capText(output), isError: false };
  const text = jsonText(output);
  const details = isJsonValue(output) && text.length <= MAX_TEXT_CHARS ? { details: output } : {};
  return { content: capText(text), isError: false, ...details };
}

/** Any value as text: JSON where it has one, else its string form (a BigInt, a cycle, a function). */
export function jsonText(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
