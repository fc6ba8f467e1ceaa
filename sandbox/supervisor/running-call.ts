import { monotonicMs, type RunningMark } from "../../src/protocol/index.js";
import type { WorkerExitReason } from "./events.js";
import type { PendingCall } from "./pending-call.js";

/** A call a worker is running: since when (`performance.now()` time) and whether it is still loading its bundle. */
export interface RunningCall {
  readonly entry: PendingCall;
  readonly startedAt: number;
  readonly loading: boolean;
}

/**
 * The call a worker is running: the one the running mark names if it is still pending; else (the mark
 * names a call already answered, or there is none) the oldest pending call, taken to have started at the
 * latest of its sending and `progressAt` (the worker's last answer or readiness). Undefined when idle.
 */
export function runningCall(
  pending: ReadonlyMap<number, PendingCall>,
  mark: RunningMark | undefined,
  progressAt: number,
): RunningCall | undefined {
  const marked = mark === undefined ? undefined : pending.get(mark.id);
  if (marked !== undefined && mark !== undefined) return markedCall(marked, mark);
  for (const head of pending.values())
    return { entry: head, startedAt: Math.max(head.sentAt, progressAt), loading: false };
  return undefined;
}

/** `entry` as running since the mark, if the mark names it, else since `progressAt` (or its sending). */
export function runningSince(
  entry: PendingCall,
  pending: ReadonlyMap<number, PendingCall>,
  mark: RunningMark | undefined,
  progressAt: number,
): RunningCall {
  if (mark !== undefined && pending.get(mark.id) === entry) return markedCall(entry, mark);
  return { entry, startedAt: Math.max(entry.sentAt, progressAt), loading: false };
}

function markedCall(entry: PendingCall, mark: RunningMark): RunningCall {
  const startedAt = performance.now() - (monotonicMs() - mark.startedAt);
  return { entry, startedAt: Math.max(entry.sentAt, startedAt), loading: mark.phase === "load" };
}

/**
 * The call that was running when a worker ended, which takes the blame (docs/architecture.md, "The trust boundary"):
 * for a kill over a deadline, the call the host killed it over; for a crash or a malformed message, the call the mark
 * names if it is still pending (none if the worker died between calls; the oldest pending call when the worker
 * has no mark file). Ends the host decided (boot, recycling, close) blame no call.
 */
export function culpritOf(
  reason: WorkerExitReason,
  pending: ReadonlyMap<number, PendingCall>,
  marks: { readonly kept: boolean; readonly mark: RunningMark | undefined },
  killedOver: PendingCall | undefined,
): PendingCall | undefined {
  switch (reason) {
    case "deadline":
      return killedOver;
    case "crashed":
    case "protocol":
      if (!marks.kept) return pending.values().next().value;
      return marks.mark === undefined ? undefined : pending.get(marks.mark.id);
    case "boot":
    case "recycled":
    case "closed":
      return undefined;
    default: {
      const never: never = reason;
      return never;
    }
  }
}
