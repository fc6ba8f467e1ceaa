import type { DecidedBy, Dispatched, DispatchOptions, RunDispatcher, StopDecision } from "../dispatch/index.js";
import { type HookEvent, type HookPoint, type Message, notifier, type Usage } from "../protocol/index.js";
import type { AgentEvent, AgentLoopResult, StopReason } from "./agent-events.js";
import type { PausedBatch } from "./approval.js";

/** What every stage of one run shares: its hooks, its signal, its clock and its transcript. */
export interface RunContext {
  readonly hooks: RunDispatcher;
  readonly signal: AbortSignal;
  readonly clock: () => number;
  readonly emit: (event: AgentEvent) => void;
  /** The durable transcript; stages append to it through `addMessage`. */
  readonly transcript: Message[];
  turn: number;
  /** False when a pause could not be kept (`AgentLoopOptions.canPause`): an ask ends its batch at once. */
  readonly canPause: boolean;
}

/**
 * Dispatches `point` on the run's hooks (with the run's signal unless `options` say otherwise) and reports
 * the decision as `hooks.decided` when at least one hook ran: the one way the loop reaches a hook point.
 */
export function decide<P extends HookPoint>(
  run: RunContext,
  point: P,
  event: HookEvent<P>,
  options: DispatchOptions = { signal: run.signal },
): Promise<Dispatched<P>> {
  return dispatchReported(run.hooks, point, event, options, run);
}

/** `run.dispatch`, then `hooks.decided` to `emit` when a hook ran (the loop's and a `HookRun`'s report). */
export async function dispatchReported<P extends HookPoint>(
  hooks: RunDispatcher,
  point: P,
  event: HookEvent<P>,
  options: DispatchOptions | undefined,
  report: { readonly turn: number; readonly emit: (event: AgentEvent) => void },
): Promise<Dispatched<P>> {
  const dispatched = await hooks.dispatch(point, event, options);
  if (dispatched.records.length > 0) {
    // The mapped union cannot be narrowed by a generic P; each member pairs point, decision and records.
    report.emit({
      type: "hooks.decided",
      turn: report.turn,
      point,
      decision: dispatched.decision,
      records: dispatched.records,
    } as AgentEvent);
  }
  return dispatched;
}

export function addMessage(run: RunContext, message: Message): void {
  run.transcript.push(message);
  run.emit({ type: "message.added", turn: run.turn, message });
}

/** Wraps a listener so a throwing listener never breaks the run. */
export function safeEmit(listener: ((event: AgentEvent) => void) | undefined): (event: AgentEvent) => void {
  return notifier(listener);
}

/** How a run ended, before `run.end`. */
export interface Ending {
  readonly stopReason: StopReason;
  readonly reason?: string | undefined;
  readonly decidedBy?: DecidedBy | undefined;
  readonly error?: AgentLoopResult["error"];
  /** Set when the run pauses for approval (stop reason `approval`). */
  readonly paused?: PausedBatch;
}

/** What a run has used so far. */
export interface Tally {
  turns: number;
  usage: Usage;
  output: string;
  /** Calls that reached the model (hook `respond`s do not): where a scripted model resumes. */
  modelCalls: number;
}

export function stopped(stop: StopDecision): Ending {
  return { stopReason: "stopped", reason: stop.reason, decidedBy: stop.by };
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
