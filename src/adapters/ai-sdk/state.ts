import type { ToolSet } from "ai";
import type { ToolCallDecision } from "../../dispatch/index.js";
import type { ToolSpec, Usage } from "../../protocol/index.js";
import type { HookRun } from "../../runtime/index.js";

/** Why the tenant's hooks ended the run, as the SDK's loop learns it (its stop condition turns true). */
export interface Halt {
  readonly reason: string;
  /** `stop`: a hook stopped the run; `end`: a `turn.end` hook ended it. */
  readonly kind: "stop" | "end";
}

/**
 * What one guarded AI SDK run shares between its middleware, its tools and its step callbacks: the run's
 * turn, each tool call's place in its batch and its `tool.call` decision (decided once, when the SDK asks
 * whether it needs approval, and used when it executes), and the halt a hook decided.
 */
export class GuardState {
  turn = 0;
  /** Set by `prepareStep` when it opened the turn the next model call belongs to. */
  turnOpen = false;
  halt: Halt | undefined;
  usage: Usage = { inputTokens: 0, outputTokens: 0 };
  tools: ToolSet = {};
  specs: Promise<ToolSpec[]> | undefined;
  readonly batches = new Map<string, { readonly index: number; readonly size: number }>();
  readonly decisions = new Map<string, ToolCallDecision>();

  readonly run: HookRun;
  readonly signal: AbortSignal | undefined;

  constructor(run: HookRun, signal: AbortSignal | undefined) {
    this.run = run;
    this.signal = signal;
  }

  nextTurn(): void {
    this.turn += 1;
    this.run.beginTurn(this.turn);
  }

  /** The first halt stands: later ones are consequences of it. */
  stop(reason: string, kind: Halt["kind"] = "stop"): void {
    this.halt ??= { reason, kind };
  }

  addUsage(usage: Usage): void {
    this.usage = {
      inputTokens: this.usage.inputTokens + usage.inputTokens,
      outputTokens: this.usage.outputTokens + usage.outputTokens,
    };
  }

  setTools(tools: ToolSet): void {
    this.tools = tools;
    this.specs = undefined;
  }
}
