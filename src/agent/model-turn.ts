import type { ModelRequestPatch } from "../dispatch/index.js";
import type { AssistantMessage, Message, ModelSettings, ToolSpec } from "../protocol/index.js";
import type { Model, ModelReply } from "./model.js";
import { ModelError } from "./model-error.js";
import { callModel } from "./model-stream.js";
import { addMessage, decide, type Ending, messageOf, type RunContext, stopped, type Tally } from "./run-context.js";
import type { StreamWindow } from "./stream-tap.js";

/** How the request side of one turn ended. */
export type ModelTurn =
  | {
      readonly kind: "answered";
      readonly message: AssistantMessage;
      /** Tool names the model may call this turn (after `tools.prepare` and `activeTools`). */
      readonly active: string[];
      readonly malformedArgs: Readonly<Record<string, string>> | undefined;
    }
  /** `model.response` → `retry`: the turn is spent, the next one asks again. */
  | { readonly kind: "retried" }
  | { readonly kind: "ended"; readonly ending: Ending };

/**
 * One model call with its hooks: `context.prepare` (durable, then request-only), `tools.prepare`,
 * `model.request`, the model (or a hook's `respond`), `model.response`. Counts the turn and its usage.
 */
export async function modelTurn(
  run: RunContext,
  setup: {
    readonly model: Model;
    readonly settings: ModelSettings;
    readonly specs: readonly ToolSpec[];
    readonly stream: StreamWindow;
  },
  tally: Tally,
): Promise<ModelTurn> {
  const { signal } = run;
  const ended = (ending: Ending): ModelTurn => ({ kind: "ended", ending });

  const { decision: durable } = await decide(run, "context.prepare", { messages: run.transcript, scope: "durable" });
  if (durable.type === "stop") return ended(stopped(durable));
  if (durable.replaced) run.transcript.splice(0, run.transcript.length, ...durable.messages);
  const { decision: provider } = await decide(run, "context.prepare", { messages: run.transcript, scope: "request" });
  if (provider.type === "stop") return ended(stopped(provider));
  let messages: readonly Message[] = provider.replaced ? provider.messages : run.transcript;

  const { decision: offered } = await decide(run, "tools.prepare", { tools: [...setup.specs] });
  if (offered.type === "stop") return ended(stopped(offered));
  let active = offered.tools.map((t) => t.name);

  const { model, settings } = setup;
  const event = { turn: run.turn, model: model.id, settings, messageCount: messages.length };
  const { decision: request } = await decide(run, "model.request", event);
  if (request.type === "stop") return ended(stopped(request));
  const { patch } = request;
  const allowed = patch.activeTools;
  if (allowed) active = active.filter((name) => allowed.includes(name));
  if (patch.system !== undefined) messages = withSystem(messages, patch.system);

  tally.turns += 1;
  const startedAt = run.clock();
  let reply: ModelReply;
  if (request.type === "respond") {
    const calls = request.message.toolCalls?.length ?? 0;
    reply = {
      message: request.message,
      usage: { inputTokens: 0, outputTokens: 0 },
      finishReason: calls > 0 ? "toolCalls" : "stop",
    };
  } else {
    const tools = setup.specs.filter((s) => active.includes(s.name));
    try {
      const modelRequest = { model: patch.model ?? model.id, messages, tools, settings: merge(settings, patch) };
      tally.modelCalls += 1;
      const called = await callModel(run, model, modelRequest, setup.stream);
      if (called.type === "stopped") return ended(stopped(called.stop));
      reply = called.reply;
    } catch (error) {
      if (signal.aborted) throw error;
      const code = error instanceof ModelError ? error.code : "host_error";
      return ended({ stopReason: "error", reason: messageOf(error), error: { code, message: messageOf(error) } });
    }
  }
  tally.usage = {
    inputTokens: tally.usage.inputTokens + reply.usage.inputTokens,
    outputTokens: tally.usage.outputTokens + reply.usage.outputTokens,
  };
  run.emit({
    type: "model.replied",
    turn: run.turn,
    model: patch.model ?? model.id,
    message: reply.message,
    usage: reply.usage,
    durationMs: run.clock() - startedAt,
    byHook: request.type === "respond",
  });

  const hasToolCalls = (reply.message.toolCalls?.length ?? 0) > 0;
  const responseEvent = { message: reply.message, usage: reply.usage, finishReason: reply.finishReason, hasToolCalls };
  const { decision: response } = await decide(run, "model.response", responseEvent);
  switch (response.type) {
    case "stop":
      return ended(stopped(response));
    case "retry":
      // Dispatch decides `retry` only for tool-free turns; the rejected answer stays so the feedback makes sense.
      if (response.feedback !== undefined) {
        addMessage(run, reply.message);
        addMessage(run, { role: "user", content: response.feedback });
      }
      return { kind: "retried" };
    case "accept":
      return {
        kind: "answered",
        message: response.message,
        active,
        malformedArgs: response.replaced ? undefined : reply.malformedArgs,
      };
    default: {
      const never: never = response;
      return never;
    }
  }
}

/** A `model.request` system addition: provider-only, appended to the leading system message. */
function withSystem(messages: readonly Message[], system: string): Message[] {
  const [first, ...rest] = messages;
  if (first?.role === "system") return [{ role: "system", content: `${first.content}\n\n${system}` }, ...rest];
  return [{ role: "system", content: system }, ...messages];
}

function merge(settings: ModelSettings, patch: ModelRequestPatch): ModelSettings {
  const merged: ModelSettings = { ...settings };
  if (patch.temperature !== undefined) merged.temperature = patch.temperature;
  if (patch.maxTokens !== undefined) merged.maxTokens = patch.maxTokens;
  if (patch.toolChoice !== undefined) merged.toolChoice = patch.toolChoice;
  return merged;
}
