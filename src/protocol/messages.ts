import { z } from "zod";
import { JsonObject, JsonValue } from "./json.js";

/**
 * Messages are keyed on `role` (not `type`) because every chat-completions API and the four hook systems
 * isohook unifies key them that way; hook authors read and write them as they know them.
 */

/** Caps on strings a guest may hand back; whole results are capped separately (limits.maxResultChars). */
export const MAX_REASON_CHARS = 2_000;
export const MAX_TEXT_CHARS = 60_000;
export const MAX_NAME_CHARS = 128;

export const ToolName = z
  .string()
  .min(1)
  .max(MAX_NAME_CHARS)
  .regex(/^[A-Za-z0-9_.-]+$/, "Expected a tool name of letters, digits, '_', '.' or '-'");

export const ToolCall = z.strictObject({
  id: z.string().min(1).max(MAX_NAME_CHARS),
  name: ToolName,
  args: JsonObject,
});
export type ToolCall = z.infer<typeof ToolCall>;

export const SystemMessage = z.strictObject({ role: z.literal("system"), content: z.string().max(MAX_TEXT_CHARS) });
export const UserMessage = z.strictObject({ role: z.literal("user"), content: z.string().max(MAX_TEXT_CHARS) });
export const AssistantMessage = z.strictObject({
  role: z.literal("assistant"),
  content: z.string().max(MAX_TEXT_CHARS),
  toolCalls: z.array(ToolCall).max(64).optional(),
});
export const ToolMessage = z.strictObject({
  role: z.literal("tool"),
  toolCallId: z.string().min(1).max(MAX_NAME_CHARS),
  name: ToolName,
  content: z.string().max(MAX_TEXT_CHARS),
  isError: z.boolean(),
});

export const Message = z.discriminatedUnion("role", [SystemMessage, UserMessage, AssistantMessage, ToolMessage]);
export type Message = z.infer<typeof Message>;
export type AssistantMessage = z.infer<typeof AssistantMessage>;
export type ToolMessage = z.infer<typeof ToolMessage>;

export const ToolResult = z.strictObject({
  content: z.string().max(MAX_TEXT_CHARS),
  isError: z.boolean(),
  details: JsonValue.optional(),
});
export type ToolResult = z.infer<typeof ToolResult>;

/** What the model and the hooks see of a tool: never the live tool object. */
export const ToolSpec = z.strictObject({
  name: ToolName,
  description: z.string().max(MAX_TEXT_CHARS),
  parameters: JsonObject,
});
export type ToolSpec = z.infer<typeof ToolSpec>;

export const Usage = z.strictObject({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof Usage>;

export const ToolChoice = z.union([z.enum(["auto", "none", "required"]), z.strictObject({ name: ToolName })]);
export type ToolChoice = z.infer<typeof ToolChoice>;

export const ModelSettings = z.strictObject({
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().positive().optional(),
  toolChoice: ToolChoice.optional(),
});
export type ModelSettings = z.infer<typeof ModelSettings>;
