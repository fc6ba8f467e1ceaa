import { z } from "zod";
import {
  AssistantMessage,
  MAX_NAME_CHARS,
  MAX_TEXT_CHARS,
  Message,
  ModelSettings,
  ToolCall,
  ToolMessage,
  ToolName,
  ToolResult,
  ToolSpec,
  Usage,
} from "./messages.js";

/**
 * The event each hook point receives, as JSON. docs/architecture.md, "Hook points, events and stacking", has their
 * table.
 */

export const RunStartEvent = z.strictObject({ input: z.array(Message) });

export const InboundSource = z.enum(["user", "steering", "followUp", "peer"]);
export const InputInboundEvent = z.strictObject({
  source: InboundSource,
  from: z.string().max(MAX_NAME_CHARS).optional(),
  message: Message,
});

export const ContextScope = z.enum(["durable", "request"]);
export const ContextPrepareEvent = z.strictObject({ messages: z.array(Message), scope: ContextScope });

export const ToolsPrepareEvent = z.strictObject({ tools: z.array(ToolSpec) });

export const ModelRequestEvent = z.strictObject({
  turn: z.number().int().nonnegative(),
  model: z.string().max(MAX_NAME_CHARS),
  settings: ModelSettings,
  messageCount: z.number().int().nonnegative(),
});

export const FinishReason = z.enum(["stop", "toolCalls", "length", "error"]);
export const ModelResponseEvent = z.strictObject({
  message: AssistantMessage,
  usage: Usage,
  finishReason: FinishReason,
  hasToolCalls: z.boolean(),
});

/**
 * A window of streamed model output, coalesced: `delta` is what arrived since the last window of the same
 * kind (and tool call), `aggregated` everything of it so far this turn. `callId` is set for `toolArgs`.
 */
export const StreamKind = z.enum(["text", "reasoning", "toolArgs"]);
export const ModelStreamEvent = z.strictObject({
  turn: z.number().int().nonnegative(),
  kind: StreamKind,
  delta: z.string().max(MAX_TEXT_CHARS),
  aggregated: z.string().max(MAX_TEXT_CHARS),
  callId: z.string().min(1).max(MAX_NAME_CHARS).optional(),
});

export const InvalidToolReason = z.enum(["unknownTool", "notAllowed", "badArgs"]);
export const ToolInvalidEvent = z.strictObject({
  call: ToolCall,
  reason: InvalidToolReason,
  available: z.array(ToolName),
});

export const ToolCallEvent = z.strictObject({
  call: ToolCall,
  batch: z.strictObject({ index: z.number().int().nonnegative(), size: z.number().int().positive() }),
});

export const ToolResultEvent = z.strictObject({ call: ToolCall, executed: z.boolean(), result: ToolResult });

export const TurnEndEvent = z.strictObject({
  turn: z.number().int().nonnegative(),
  message: AssistantMessage,
  toolResults: z.array(ToolMessage),
});

export const OutputValidateEvent = z.strictObject({ output: z.string() });

export const StopReason = z.enum(["completed", "stopped", "maxTurns", "aborted", "error", "failed"]);
export const RunEndEvent = z.strictObject({
  stopReason: StopReason,
  turns: z.number().int().nonnegative(),
  usage: Usage,
});
