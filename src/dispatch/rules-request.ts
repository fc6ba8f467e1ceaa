import type { HookEvent, HookResult } from "../protocol/index.js";
import type {
  ContextPrepareDecision,
  InputInboundDecision,
  ModelRequestDecision,
  ModelRequestPatch,
  ModelResponseDecision,
  RunStartDecision,
  ToolsPrepareDecision,
} from "./decisions.js";
import { type Chain, chainRule, chainStart, finished, noCheck, type PointRule, rewritten, stopOf } from "./rule.js";

/** The rules of the points before the model answers. */

export const runStartRule = chainRule<"run.start", RunStartDecision>({
  point: "run.start",
  policy: "closed",
  apply: (acc, result, by) =>
    result.type === "rewrite" ? rewritten(acc, { input: result.input }) : finished(acc, stopOf(result.reason, by)),
  decide: (acc) => acc.final ?? { type: "proceed", input: acc.event.input, rewritten: acc.changed },
});

export const inputInboundRule = chainRule<"input.inbound", InputInboundDecision>({
  point: "input.inbound",
  policy: "closed",
  apply(acc, result, by) {
    switch (result.type) {
      case "rewrite":
        return rewritten(acc, { ...acc.event, message: result.message });
      case "drop":
        return finished(acc, { type: "drop", reason: result.reason, by });
      case "stop":
        return finished(acc, stopOf(result.reason, by));
      default: {
        const never: never = result;
        return never;
      }
    }
  },
  safe: (acc, failure, by) => finished(acc, { type: "drop", reason: failure.code, by }),
  decide: (acc) => acc.final ?? { type: "deliver", message: acc.event.message, rewritten: acc.changed },
});

export const contextPrepareRule = chainRule<"context.prepare", ContextPrepareDecision>({
  point: "context.prepare",
  policy: "open",
  apply: (acc, result) => rewritten(acc, { ...acc.event, messages: result.messages }),
  decide: (acc) => acc.final ?? { type: "messages", messages: acc.event.messages, replaced: acc.changed },
});

export const toolsPrepareRule = chainRule<"tools.prepare", ToolsPrepareDecision>({
  point: "tools.prepare",
  policy: "open",
  apply(acc, result) {
    // Filtering the current list intersects with every earlier restrict and can never add or rename.
    const allow = new Set(result.allow);
    const tools = acc.event.tools.filter((tool) => allow.has(tool.name));
    return tools.length === acc.event.tools.length ? acc : rewritten(acc, { tools });
  },
  decide: (acc) => acc.final ?? { type: "tools", tools: acc.event.tools, restricted: acc.changed },
});

interface ModelRequestAcc extends Chain<"model.request", ModelRequestDecision> {
  readonly patch: ModelRequestPatch;
  readonly patched: boolean;
}
type RequestPatch = Extract<HookResult<"model.request">, { type: "patch" }>;

export const modelRequestRule: PointRule<"model.request", ModelRequestAcc> = {
  point: "model.request",
  policy: "open",
  start: (event) => ({ ...chainStart<"model.request", ModelRequestDecision>(event), patch: {}, patched: false }),
  event: (acc) => acc.event,
  check: noCheck,
  apply(acc, result, by) {
    switch (result.type) {
      case "patch": {
        const patch = mergePatch(acc.patch, result);
        return { ...acc, event: patchedEvent(acc.event, result), changed: true, patch, patched: true };
      }
      case "respond":
        return { ...acc, final: { type: "respond", message: result.message, patch: acc.patch, by } };
      case "stop":
        return { ...acc, final: stopOf(result.reason, by) };
      default: {
        const never: never = result;
        return never;
      }
    }
  },
  safe: (acc, failure, by) => ({ ...acc, final: stopOf(failure.code, by) }),
  done: (acc) => acc.final !== undefined,
  decide: (acc) => acc.final ?? { type: "request", patch: acc.patch, patched: acc.patched },
};

/** Scalars: the later patch wins; `activeTools`: the intersection of every patch that set it. */
export function mergePatch(into: ModelRequestPatch, next: RequestPatch): ModelRequestPatch {
  const merged: { -readonly [K in keyof ModelRequestPatch]: ModelRequestPatch[K] } = { ...into };
  if (next.model !== undefined) merged.model = next.model;
  if (next.temperature !== undefined) merged.temperature = next.temperature;
  if (next.maxTokens !== undefined) merged.maxTokens = next.maxTokens;
  if (next.toolChoice !== undefined) merged.toolChoice = next.toolChoice;
  if (next.system !== undefined) merged.system = next.system;
  if (next.activeTools !== undefined) {
    const unique = [...new Set(next.activeTools)];
    const earlier = into.activeTools;
    merged.activeTools = earlier === undefined ? unique : unique.filter((name) => earlier.includes(name));
  }
  return merged;
}

/** Later hooks see the model and settings as earlier patches left them. */
function patchedEvent(event: HookEvent<"model.request">, patch: RequestPatch): HookEvent<"model.request"> {
  const seen =
    patch.model !== undefined ||
    patch.temperature !== undefined ||
    patch.maxTokens !== undefined ||
    patch.toolChoice !== undefined;
  if (!seen) return event;
  const settings = { ...event.settings };
  if (patch.temperature !== undefined) settings.temperature = patch.temperature;
  if (patch.maxTokens !== undefined) settings.maxTokens = patch.maxTokens;
  if (patch.toolChoice !== undefined) settings.toolChoice = patch.toolChoice;
  return { ...event, model: patch.model ?? event.model, settings };
}

export const modelResponseRule = chainRule<"model.response", ModelResponseDecision>({
  point: "model.response",
  policy: "open",
  check: (acc, result) =>
    result.type === "retry" && acc.event.hasToolCalls
      ? "retry is only allowed on a turn without tool calls; this response has tool calls"
      : undefined,
  apply(acc, result, by) {
    switch (result.type) {
      case "replace": {
        const hasToolCalls = (result.message.toolCalls?.length ?? 0) > 0;
        return rewritten(acc, { ...acc.event, message: result.message, hasToolCalls });
      }
      case "retry":
        return finished(
          acc,
          result.feedback === undefined ? { type: "retry", by } : { type: "retry", feedback: result.feedback, by },
        );
      case "stop":
        return finished(acc, stopOf(result.reason, by));
      default: {
        const never: never = result;
        return never;
      }
    }
  },
  decide: (acc) => acc.final ?? { type: "accept", message: acc.event.message, replaced: acc.changed },
});
