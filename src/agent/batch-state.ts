import type { DecidedBy, StopDecision } from "../dispatch/index.js";
import type { ToolCall, ToolMessage, ToolResult } from "../protocol/index.js";
import type { PausedBatch, PendingApproval } from "./approval.js";
import { addMessage, decide, type RunContext } from "./run-context.js";
import type { Tool } from "./tool.js";

export interface BatchOutcome {
  /** One per call, in call order, already appended to the transcript (empty while calls are pending). */
  readonly results: ToolMessage[];
  /** Set when a `block` or a `tool.result` patch asked to end the run after this batch. */
  readonly terminate: { readonly reason: string; readonly by?: DecidedBy | undefined } | undefined;
  /** Set when a hook stopped the run during the batch. */
  readonly stop: StopDecision | undefined;
  /** Set when the batch was cut short by the signal or a host error (the remaining calls were cancelled). */
  readonly interrupted: { readonly error: unknown } | undefined;
  /** Set when hooks asked for approval: every other call is done, these wait for a human. */
  readonly held: Omit<PausedBatch, "message"> | undefined;
}

export type How = "executed" | "blocked" | "invalid" | "skipped" | "cancelled" | "rejected";

/** A call after `tool.invalid` and `tool.call`: ready to run, already answered, or held for a human. */
export type Prepared =
  | { readonly kind: "run"; readonly call: ToolCall; readonly tool: Tool; readonly args: unknown }
  | {
      readonly kind: "answered";
      readonly call: ToolCall;
      readonly how: How;
      readonly result: ToolResult;
      readonly terminate?: NonNullable<BatchOutcome["terminate"]>;
    }
  | { readonly kind: "ask"; readonly pending: Omit<PendingApproval, "turn" | "index"> }
  | { readonly kind: "stop"; readonly stop: StopDecision };

export type Settled = Exclude<Prepared, { kind: "stop" } | { kind: "ask" }>;

/**
 * One batch's results by call index, joined to the transcript in call order: a result waits while an
 * earlier call is pending or still running.
 */
export class BatchState {
  readonly #run: RunContext;
  readonly slots: (ToolMessage | null)[];
  readonly pending: PendingApproval[] = [];
  #flushed: number;
  terminate: BatchOutcome["terminate"];
  stop: StopDecision | undefined;
  interrupted: BatchOutcome["interrupted"];

  constructor(run: RunContext, size: number, paused?: Omit<PausedBatch, "message">) {
    this.#run = run;
    this.slots = paused ? [...paused.results] : new Array<ToolMessage | null>(size).fill(null);
    this.#flushed = paused ? firstNull(paused.results) : 0;
    this.terminate = paused?.terminate;
  }

  record(index: number, call: ToolCall, how: How, result: ToolResult, started: number): void {
    const message: ToolMessage = {
      role: "tool",
      toolCallId: call.id,
      name: call.name,
      content: result.content,
      isError: result.isError,
    };
    this.slots[index] = message;
    this.#run.emit({
      type: "tool.finished",
      turn: this.#run.turn,
      call,
      how,
      result,
      durationMs: this.#run.clock() - started,
    });
    this.#flush();
  }

  /** Finishes a call: `tool.result`, then its message (a stop there ends the batch). */
  async finish(index: number, prepared: Settled, result: ToolResult, started: number): Promise<void> {
    const run = this.#run;
    const executed = prepared.kind === "run";
    const dispatched = await decide(run, "tool.result", { call: prepared.call, executed, result });
    const checked = dispatched.decision;
    const how = prepared.kind === "run" ? "executed" : prepared.how;
    if (checked.type === "stop") {
      this.stop = checked;
      this.record(index, prepared.call, how, result, started);
      return;
    }
    if (checked.terminate && !this.terminate) {
      const by = dispatched.records.findLast(
        (r) => r.outcome.type === "decided" && r.outcome.result?.type === "patch" && r.outcome.result.terminate,
      );
      this.terminate = {
        reason: `terminated after \`${prepared.call.name}\``,
        by: by && { hookId: by.hookId, source: by.source },
      };
    }
    this.record(index, prepared.call, how, checked.result, started);
  }

  /** Cancels what a stop, abort or host error left without a result (held calls too), then reports. */
  outcome(calls: readonly ToolCall[]): BatchOutcome {
    const run = this.#run;
    if (this.stop || this.interrupted) {
      const why = run.signal.aborted
        ? "cancelled: the run was aborted before this call finished"
        : this.stop
          ? `cancelled: the run was stopped (${this.stop.reason})`
          : "cancelled: the host failed before this call finished";
      this.pending.length = 0;
      for (const [i, call] of calls.entries())
        if (this.slots[i] === null) this.record(i, call, "cancelled", { content: why, isError: true }, run.clock());
    }
    const { terminate, stop, interrupted } = this;
    if (this.pending.length > 0) {
      const held = { results: [...this.slots], pending: [...this.pending], terminate };
      return { results: [], terminate, stop, interrupted, held };
    }
    return { results: this.slots.filter((m) => m !== null), terminate, stop, interrupted, held: undefined };
  }

  #flush(): void {
    while (this.#flushed < this.slots.length) {
      const message = this.slots[this.#flushed];
      if (message === null || message === undefined) return;
      addMessage(this.#run, message);
      this.#flushed += 1;
    }
  }
}

function firstNull(results: readonly (ToolMessage | null)[]): number {
  const i = results.indexOf(null);
  return i === -1 ? results.length : i;
}
