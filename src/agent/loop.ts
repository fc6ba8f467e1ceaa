import type { z } from "zod";
import type { DecidedBy, RunDispatcher } from "../dispatch/index.js";
import type { AssistantMessage, events, Message, ModelSettings, ToolMessage } from "../protocol/index.js";
import type { AgentEvent, AgentLoopResult } from "./agent-events.js";
import {
  type ApprovalDecisions,
  decisionsProblem,
  type PausedBatch,
  type PausedRun,
  type PendingApproval,
} from "./approval.js";
import type { BatchOutcome } from "./batch-state.js";
import { deliver, deliverAll, deliverFollowUp } from "./inbound.js";
import type { RunInbox } from "./inbox.js";
import type { Model } from "./model.js";
import { modelTurn } from "./model-turn.js";
import {
  addMessage,
  decide,
  type Ending,
  messageOf,
  type RunContext,
  safeEmit,
  stopped,
  type Tally,
} from "./run-context.js";
import { type StreamWindow, streamWindowOf } from "./stream-tap.js";
import type { Tool } from "./tool.js";
import { resumeToolBatch, runToolBatch } from "./tool-batch.js";

type RunEndStopReason = z.infer<typeof events.StopReason>;

export const DEFAULT_MAX_TURNS = 20;

export interface AgentLoopOptions {
  /** The run's hook stack (`Dispatcher.openRun`); every hook point is called through it. */
  readonly hooks: RunDispatcher;
  readonly model: Model;
  readonly tools?: readonly Tool[];
  /** A user prompt, or messages (earlier history allowed; only `user` messages pass `input.inbound`). */
  readonly input: string | readonly Message[];
  /** A system prompt put before the input (hooks see it in `run.start` and `context.prepare`). */
  readonly system?: string;
  readonly settings?: ModelSettings;
  /** Model calls allowed, retries included. Default 20. */
  readonly maxTurns?: number;
  /** Run a batch's tools concurrently (hooks still see the calls in order; results stay in call order). */
  readonly parallelToolCalls?: boolean;
  /** Drained before every turn: messages that steer the run (through `input.inbound`, source `steering`). */
  readonly steering?: () => readonly Message[];
  /** Drained before every turn, after `steering`: messages from outside (`Inbox`), each with its source. */
  readonly inbox?: RunInbox;
  /** Drained when the run would otherwise complete (source `followUp`); a delivered one starts another turn. */
  readonly followUp?: () => readonly Message[];
  /** How streamed output is coalesced for `model.stream` hooks; default 100 ms or 400 characters. */
  readonly streamWindow?: Partial<StreamWindow>;
  readonly signal?: AbortSignal;
  /** Milliseconds for durations; default `performance.now`. */
  readonly clock?: () => number;
  readonly onEvent?: (event: AgentEvent) => void;
  /**
   * Answers asks in-process, the way a human would: called with a batch's held calls; decisions (checked
   * like `resumeAgentLoop`'s) finish the batch at once, undefined ends the run with stop reason `approval`.
   */
  readonly approve?: (
    pending: readonly PendingApproval[],
    signal: AbortSignal,
  ) => ApprovalDecisions | undefined | Promise<ApprovalDecisions | undefined>;
  /**
   * Whether a paused run can be kept (the caller can seal a checkpoint, or `approve` answers). Default true.
   * False: the first ask ends its batch at once, so no tool runs after a pause that would be lost; the run
   * ends with stop reason `approval` as usual.
   */
  readonly canPause?: boolean;
}

/**
 * Runs one agent session: `run.start` → per turn (`input.inbound` for steering, `context.prepare` durable
 * then request-only, `tools.prepare`, `model.request`, the model, `model.response`, `tool.invalid` /
 * `tool.call` / the tool / `tool.result` per call, `turn.end`) → `output.validate` → `run.end`.
 * Never rejects: hook failures are decisions, model and host errors end the run with `error`, an abort ends
 * it with `aborted`; every assistant tool call in the transcript has its tool result.
 *
 * ```ts
 * const result = await runAgentLoop({ hooks: dispatcher.openRun({ tenantId, runId }), model, tools, input: "Hi" });
 * ```
 */
export async function runAgentLoop(options: AgentLoopOptions): Promise<AgentLoopResult> {
  const tally: Tally = { turns: 0, usage: { inputTokens: 0, outputTokens: 0 }, output: "", modelCalls: 0 };
  return loop(options, [], 0, tally, (run) => drive(run, options, tally));
}

/**
 * Continues a run that ended with stop reason `approval`, as if it never stopped: `paused` is that result's
 * `paused`, `decisions` one decision per pending call (checked first: a missing or unknown call id, or a
 * decision of the wrong shape, throws `TypeError` before anything runs). `options.hooks` must be the
 * run's scope, or one opened with its `snapshot()` as `resume`; `input` is ignored.
 */
export async function resumeAgentLoop(
  options: AgentLoopOptions,
  paused: PausedRun,
  decisions: ApprovalDecisions,
): Promise<AgentLoopResult> {
  const problem = decisionsProblem(paused.batch.pending, decisions);
  if (problem !== undefined) throw new TypeError(problem);
  const tally: Tally = {
    turns: paused.turns,
    usage: paused.usage,
    output: paused.output,
    modelCalls: paused.modelCalls,
  };
  return loop(options, [...paused.transcript], paused.turn, tally, (run) =>
    turns(run, options, tally, { batch: paused.batch, decisions }),
  );
}

async function loop(
  options: AgentLoopOptions,
  transcript: Message[],
  turn: number,
  tally: Tally,
  body: (run: RunContext) => Promise<Ending>,
): Promise<AgentLoopResult> {
  const signal = options.signal ?? new AbortController().signal;
  const run: RunContext = {
    hooks: options.hooks,
    signal,
    clock: options.clock ?? (() => performance.now()),
    emit: safeEmit(options.onEvent),
    transcript,
    turn,
    canPause: options.canPause !== false || options.approve !== undefined,
  };
  let ending: Ending;
  try {
    ending = await body(run);
  } catch (error) {
    ending = signal.aborted
      ? { stopReason: "aborted", reason: "the run was aborted" }
      : { stopReason: "error", reason: messageOf(error), error: { code: "host_error", message: messageOf(error) } };
  }
  const { paused } = ending;
  if (paused === undefined) {
    try {
      // Observers see aborted runs too: run.end is bounded by the hook timeouts, not by the run's signal.
      const event = { stopReason: ending.stopReason as RunEndStopReason, turns: tally.turns, usage: tally.usage };
      await decide(run, "run.end", event, {});
    } catch {
      // run.end is observe-only; the run's outcome stands.
    }
  }
  run.emit({
    type: "run.finished",
    stopReason: ending.stopReason,
    reason: ending.reason,
    turns: tally.turns,
    usage: tally.usage,
  });
  const result: AgentLoopResult = {
    stopReason: ending.stopReason,
    reason: ending.reason,
    decidedBy: ending.decidedBy,
    error: ending.error,
    transcript: run.transcript,
    output: tally.output,
    turns: tally.turns,
    usage: tally.usage,
  };
  if (paused === undefined) return result;
  const pausedRun: PausedRun = {
    turn: run.turn,
    transcript: run.transcript,
    turns: tally.turns,
    usage: tally.usage,
    output: tally.output,
    modelCalls: tally.modelCalls,
    batch: paused,
  };
  return { ...result, pending: paused.pending, paused: pausedRun };
}

async function drive(run: RunContext, options: AgentLoopOptions, tally: Tally): Promise<Ending> {
  const { decision: start } = await decide(run, "run.start", { input: initialInput(options) });
  if (start.type === "stop") return stopped(start);
  let lastDrop: DecidedBy | undefined;
  for (const message of start.input) {
    if (message.role !== "user") {
      addMessage(run, message);
      continue;
    }
    const delivery = await deliver(run, "user", message);
    if (delivery.type === "stop") return stopped(delivery);
    if (delivery.type === "dropped") lastDrop = delivery.by;
  }
  if (!run.transcript.some((m) => m.role === "user")) {
    return {
      stopReason: "stopped",
      reason: "no input was delivered: every user message was dropped",
      decidedBy: lastDrop,
    };
  }
  return turns(run, options, tally, undefined);
}

/** The turns of a run; `resumed` first finishes a batch that was held for approval. */
async function turns(
  run: RunContext,
  options: AgentLoopOptions,
  tally: Tally,
  resumed: { readonly batch: PausedBatch; readonly decisions: ApprovalDecisions } | undefined,
): Promise<Ending> {
  const { hooks, signal } = run;
  const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS;
  const tools = options.tools ?? [];
  const byName = new Map(tools.map((t) => [t.spec.name, t]));
  const specs = tools.map((t) => t.spec);
  const stream = streamWindowOf(options.streamWindow);

  let ended: { reason: string | undefined; by: DecidedBy } | undefined;
  for (;;) {
    let message: AssistantMessage;
    let batch: BatchOutcome | undefined;
    if (resumed !== undefined) {
      message = resumed.batch.message;
      batch = await resumeToolBatch(run, resumed.batch, byName, resumed.decisions);
      resumed = undefined;
    } else {
      signal.throwIfAborted();
      if (tally.turns >= maxTurns)
        return { stopReason: "maxTurns", reason: `the run reached its limit of ${maxTurns} turns` };
      run.turn = tally.turns + 1;
      hooks.beginTurn(run.turn);
      run.emit({ type: "turn.started", turn: run.turn });

      const steered = await deliverAll(run, [
        ...(options.steering?.() ?? []).map((message) => ({ source: "steering" as const, message })),
        ...(options.inbox?.drain(run.turn) ?? []),
      ]);
      if (steered !== undefined) return stopped(steered);

      const turn = await modelTurn(
        run,
        { model: options.model, settings: options.settings ?? {}, specs, stream },
        tally,
      );
      if (turn.kind === "ended") return turn.ending;
      if (turn.kind === "retried") continue;
      message = turn.message;
      tally.output = message.content;
      addMessage(run, message);
      const calls = message.toolCalls ?? [];
      if (calls.length > 0) {
        batch = await runToolBatch(
          run,
          calls,
          { byName, active: turn.active },
          { parallel: options.parallelToolCalls === true, malformedArgs: turn.malformedArgs },
        );
      }
    }

    while (batch?.held !== undefined && options.approve !== undefined) {
      const held: PausedBatch = { ...batch.held, message };
      const decisions = await options.approve(held.pending, signal);
      if (decisions === undefined) break;
      const problem = decisionsProblem(held.pending, decisions);
      if (problem !== undefined) throw new TypeError(`approve: ${problem}`);
      batch = await resumeToolBatch(run, held, byName, decisions);
    }
    const calls = message.toolCalls ?? [];
    let toolResults: ToolMessage[] = [];
    if (batch !== undefined) {
      toolResults = batch.results;
      if (batch.interrupted) throw batch.interrupted.error;
      if (batch.stop) return stopped(batch.stop);
      if (batch.held) {
        const n = batch.held.pending.length;
        return {
          stopReason: "approval",
          reason: `${n} tool call${n === 1 ? "" : "s"} wait${n === 1 ? "s" : ""} for approval`,
          decidedBy: batch.held.pending[0]?.by,
          paused: { ...batch.held, message },
        };
      }
      if (batch.terminate)
        return {
          stopReason: "stopped",
          reason: `terminated: ${batch.terminate.reason}`,
          decidedBy: batch.terminate.by,
        };
    }

    const { decision: turnEnd } = await decide(run, "turn.end", { turn: run.turn, message, toolResults });
    switch (turnEnd.type) {
      case "stop":
        return stopped(turnEnd);
      case "continue":
        if (turnEnd.message !== undefined) addMessage(run, { role: "user", content: turnEnd.message });
        continue;
      case "end":
        ended = { reason: turnEnd.reason, by: turnEnd.by };
        break;
      case "default": {
        if (calls.length > 0) continue;
        const followUp = await deliverFollowUp(run, options.followUp?.() ?? []);
        if (followUp === "delivered") continue;
        if (followUp !== "none") return stopped(followUp);
        break;
      }
      default: {
        const never: never = turnEnd;
        return never;
      }
    }

    const { decision: verdict } = await decide(run, "output.validate", { output: tally.output });
    switch (verdict.type) {
      case "accept":
        return { stopReason: "completed", reason: ended?.reason, decidedBy: ended?.by };
      case "fail":
        return { stopReason: "failed", reason: verdict.reason, decidedBy: verdict.by };
      case "stop":
        return stopped(verdict);
      case "retry":
        if (ended) {
          return {
            stopReason: "failed",
            reason: `output rejected after the run was ended: ${verdict.feedback}`,
            decidedBy: verdict.by,
          };
        }
        addMessage(run, { role: "user", content: verdict.feedback });
        continue;
      default: {
        const never: never = verdict;
        return never;
      }
    }
  }
}

function initialInput(options: AgentLoopOptions): Message[] {
  const input: Message[] =
    typeof options.input === "string" ? [{ role: "user", content: options.input }] : [...options.input];
  if (options.system !== undefined) input.unshift({ role: "system", content: options.system });
  return input;
}
