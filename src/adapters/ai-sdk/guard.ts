import type { LanguageModelV4 } from "@ai-sdk/provider";
import { type StepResult, type ToolSet, wrapLanguageModel } from "ai";
import type { HookEvent } from "../../protocol/index.js";
import type { HookRun } from "../../runtime/index.js";
import { hookMiddleware, type MiddlewareOptions } from "./middleware.js";
import { GuardState, type Halt } from "./state.js";
import { endTurn, prepareTurn } from "./steps.js";
import { guardTools } from "./tools.js";

export interface GuardOptions extends MiddlewareOptions {
  /** Aborts every dispatch of the guard (a tool call's own `abortSignal` applies as well). */
  readonly signal?: AbortSignal;
}

/**
 * A tenant's hooks over an AI SDK app's `generateText`/`streamText` loop, through the pieces the SDK
 * already takes: a language-model middleware, wrapped tools, and `prepareStep`/`onStepFinish`/`stopWhen`.
 *
 * ```ts
 * const run = await runtime.openRun({ tenantId: "acme" });
 * const guard = guardAiSdk(run);
 * const input = await guard.input("Clean up the workspace");
 * if ("refused" in input) return input.refused;
 * const result = await generateText({
 *   model: guard.model(openai("gpt-5")),
 *   tools: guard.tools({ shell }),
 *   prepareStep: guard.prepareStep,
 *   onStepFinish: guard.onStepFinish,
 *   stopWhen: [guard.stopWhen, stepCountIs(10)],
 *   prompt: input.prompt,
 * });
 * await guard.end();
 * ```
 */
export interface AiSdkGuard {
  readonly run: HookRun;
  /**
   * `input.inbound` on the user's prompt before the app hands it to the SDK: the message to send (a hook
   * may rewrite it), or why a hook dropped it or stopped the run.
   */
  input(prompt: string): Promise<{ readonly prompt: string } | { readonly refused: string }>;
  /** The model with `model.request` and `model.response` around each call. */
  model(model: LanguageModelV4): LanguageModelV4;
  /** The tools with `tool.call` and `tool.result` around each call; `ask` becomes the SDK's tool approval. */
  tools<T extends ToolSet>(tools: T): T;
  /** Opens a turn and applies `tools.prepare` (a `restrict` becomes the step's `activeTools`). */
  prepareStep(options: { stepNumber: number }): Promise<{ activeTools?: never[] }>;
  /** `turn.end` on the finished step. */
  onStepFinish(step: StepResult<ToolSet>): Promise<void>;
  /** True once a hook stopped the run or a `turn.end` hook ended it. */
  stopWhen(options: unknown): boolean;
  /** Why the hooks ended the run, if they did. */
  readonly halt: Halt | undefined;
  /** The reason and question of a call a hook held for approval (a `tool-approval-request` part's call id). */
  asked(toolCallId: string): { readonly reason: string; readonly question?: string } | undefined;
  /** Dispatches `run.end` with the turns and usage seen, and ends the run. */
  end(stopReason?: HookEvent<"run.end">["stopReason"]): Promise<void>;
}

export function guardAiSdk(run: HookRun, options: GuardOptions = {}): AiSdkGuard {
  const state = new GuardState(run, options.signal);
  const middleware = hookMiddleware(state, options);
  return {
    run,
    async input(prompt) {
      const message = { role: "user" as const, content: prompt };
      const { decision } = await run.dispatch("input.inbound", { source: "user", message }, { signal: options.signal });
      if (decision.type === "stop") state.stop(decision.reason);
      if (decision.type !== "deliver") return { refused: decision.reason };
      return { prompt: decision.message.content };
    },
    model: (model) => wrapLanguageModel({ model, middleware }) as LanguageModelV4,
    tools: (tools) => guardTools(state, tools),
    prepareStep: async () => {
      const active = await prepareTurn(state);
      return active === undefined ? {} : { activeTools: active as never[] };
    },
    onStepFinish: (step) => endTurn(state, step),
    stopWhen: () => state.halt !== undefined,
    get halt() {
      return state.halt;
    },
    asked(toolCallId) {
      const decision = state.decisions.get(toolCallId);
      if (decision?.type !== "ask") return undefined;
      return decision.question === undefined
        ? { reason: decision.reason }
        : { reason: decision.reason, question: decision.question };
    },
    end: (stopReason) =>
      run.end({
        stopReason: stopReason ?? (state.halt?.kind === "stop" ? "stopped" : "completed"),
        turns: state.turn,
        usage: state.usage,
      }),
  };
}
