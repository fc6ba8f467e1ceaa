import { z } from "zod";
import { JsonObject, JsonValue } from "./json.js";
import { AssistantMessage, MAX_REASON_CHARS, MAX_TEXT_CHARS, Message, ToolChoice, ToolName } from "./messages.js";

/**
 * The results each hook point may return, as discriminated unions on `type`. Returning nothing is the
 * no-op everywhere; there is no explicit no-op result. Every object is strict: an extra key is an
 * `invalid_result`, so a typo in a hook (`{type: "block", reson: …}`) never silently changes meaning.
 */

const Reason = z.string().min(1).max(MAX_REASON_CHARS);
const Feedback = z.string().max(MAX_TEXT_CHARS);

export const StopResult = z.strictObject({ type: z.literal("stop"), reason: Reason });

export const RunStartResult = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("rewrite"), input: z.array(Message) }),
  StopResult,
]);

export const InputInboundResult = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("rewrite"), message: Message }),
  z.strictObject({ type: z.literal("drop"), reason: Reason }),
  StopResult,
]);

export const ContextPrepareResult = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("replace"), messages: z.array(Message) }),
]);

export const ToolsPrepareResult = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("restrict"), allow: z.array(ToolName) }),
]);

export const ModelRequestResult = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("patch"),
    model: z.string().min(1).max(128).optional(),
    temperature: z.number().min(0).max(2).optional(),
    maxTokens: z.number().int().positive().optional(),
    toolChoice: ToolChoice.optional(),
    activeTools: z.array(ToolName).optional(),
    system: Feedback.optional(),
  }),
  z.strictObject({ type: z.literal("respond"), message: AssistantMessage }),
  StopResult,
]);

export const ModelResponseResult = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("replace"), message: AssistantMessage }),
  z.strictObject({ type: z.literal("retry"), feedback: Feedback.optional() }),
  StopResult,
]);

/** `model.stream` only observes, or stops the run (the provider request is aborted). */
export const ModelStreamResult = z.discriminatedUnion("type", [StopResult]);

export const ToolInvalidResult = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("fail") }),
  z.strictObject({ type: z.literal("retry"), feedback: Feedback }),
  z.strictObject({ type: z.literal("repair"), name: ToolName, args: JsonObject.optional() }),
  z.strictObject({ type: z.literal("skip"), reason: Reason }),
  StopResult,
]);

/**
 * `ask` holds the call for a human: the run ends with stop reason `approval` after the batch, and resumes
 * with a decision per held call (approve, edit, reject). `question` is what to show the human.
 */
export const AskResult = z.strictObject({ type: z.literal("ask"), reason: Reason, question: Reason.optional() });

export const ToolCallResult = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("rewrite"), args: JsonObject }),
  z.strictObject({ type: z.literal("block"), reason: Reason, terminate: z.boolean().optional() }),
  AskResult,
  StopResult,
]);

export const ToolResultResult = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("patch"),
    content: z.string().max(MAX_TEXT_CHARS).optional(),
    isError: z.boolean().optional(),
    details: JsonValue.optional(),
    terminate: z.boolean().optional(),
  }),
  StopResult,
]);

export const TurnEndResult = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("continue"), message: Feedback.optional() }),
  z.strictObject({ type: z.literal("end"), reason: Reason.optional() }),
  StopResult,
]);

export const OutputValidateResult = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("accept") }),
  z.strictObject({ type: z.literal("retry"), feedback: Feedback }),
  z.strictObject({ type: z.literal("fail"), reason: Reason }),
]);

/** `run.end` is observe-only: the only valid return is nothing. */
export const RunEndResult = z.never();
