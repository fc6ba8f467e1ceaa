/**
 * The running-call mark, shared by a sandbox worker and its host through a small file the host opens and
 * hands to the worker as a file descriptor (its number in `RUNNING_MARK_FD_ENV`).
 *
 * Why: a worker answers calls in order but sends its answers in batches, so when it dies the oldest
 * unanswered call is not necessarily the one it was running — that call's answer may have been waiting in
 * the worker's outbox. Before it runs a call, the worker writes the call's id, the time and the phase at
 * offset 0 (one positional write, ~2 µs, no message), and the write outlives the process. The host reads
 * the mark when a worker dies (to blame the call that was running, and only it) and when its deadline
 * timer fires (to time the call that is running, not one already done).
 *
 * A worker with a backlog lets the calls of one isolate next in line run under one mark (`mates`, at most
 * `MAX_MARK_MATES`): the mark then says "one of these calls, all of one tenant's bundle, is running", and a
 * death is charged to the marked call, its mates failing with it rather than being re-sent to crash another
 * worker (sandbox/worker/worker-main.ts, `RunningMarks`; docs/architecture.md, "Rules learned from isolated-vm", rule 2).
 *
 * Layout: float64s — call id, start of the phase on the machine's monotonic clock (`monotonicMs`), phase
 * (0 = running the handler, 1 = loading the bundle into a fresh isolate), the number of mates, the mates' ids.
 */

export const RUNNING_MARK_FD_ENV = "ISOHOOK_RUNNING_MARK_FD";
export const MAX_MARK_MATES = 31;
export const RUNNING_MARK_BYTES = (4 + MAX_MARK_MATES) * 8;

export type RunningPhase = "run" | "load";

export interface RunningMark {
  readonly id: number;
  /** When the phase started, in `monotonicMs` time. */
  readonly startedAt: number;
  readonly phase: RunningPhase;
  /** Calls of the same isolate that may run under this mark after the marked one, in order. */
  readonly mates: readonly number[];
}

const NO_MATES: readonly number[] = [];

export function writeRunningMark(
  view: Float64Array,
  id: number,
  startedAt: number,
  phase: RunningPhase,
  mates: readonly number[] = NO_MATES,
): void {
  view[0] = id;
  view[1] = startedAt;
  view[2] = phase === "load" ? 1 : 0;
  const count = Math.min(mates.length, MAX_MARK_MATES);
  view[3] = count;
  for (let i = 0; i < count; i++) view[4 + i] = mates[i] ?? 0;
}

/** The mark in `view`, or undefined when nothing valid was written (a fresh file reads as zeros: id 0 at time 0). */
export function readRunningMark(view: Float64Array): RunningMark | undefined {
  const id = view[0];
  const startedAt = view[1];
  const phase = view[2];
  const count = view[3];
  if (id === undefined || !isCallId(id)) return undefined;
  if (startedAt === undefined || !Number.isFinite(startedAt) || startedAt <= 0) return undefined;
  if (phase !== 0 && phase !== 1) return undefined;
  if (count === undefined || !Number.isInteger(count) || count < 0 || count > MAX_MARK_MATES) return undefined;
  const mates: number[] = [];
  for (let i = 0; i < count; i++) {
    const mate = view[4 + i];
    if (mate === undefined || !isCallId(mate)) return undefined;
    mates.push(mate);
  }
  return { id, startedAt, phase: phase === 1 ? "load" : "run", mates };
}

function isCallId(x: number): boolean {
  return Number.isSafeInteger(x) && x >= 0;
}

/** Offset from `performance.now()` to the machine-wide monotonic clock `process.hrtime` reads. */
const MONOTONIC_OFFSET = Number(process.hrtime.bigint()) / 1e6 - performance.now();

/**
 * Milliseconds on the machine's monotonic clock (what `process.hrtime` reads: CLOCK_MONOTONIC on Linux),
 * comparable between processes, unlike `performance.now()`, whose origin is each process's start.
 */
export function monotonicMs(): number {
  return performance.now() + MONOTONIC_OFFSET;
}
