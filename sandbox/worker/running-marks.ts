import { writeSync } from "node:fs";
import { monotonicMs, RUNNING_MARK_BYTES, type RunningPhase, writeRunningMark } from "../../src/protocol/index.js";

/**
 * How long calls of one isolate share a mark before the next call writes its own: the host times the
 * marked call from the mark (its deadline, relief's hold), so a shared mark makes it look older by this at most.
 */
const SHARED_MARK_MS = 1;

/**
 * `covers` says whether the mark on file lists this call as a mate, and takes it as running if so; `start`
 * marks a call as running with the calls that may run under its mark; `phase` re-marks the running call when
 * it loads its bundle and when its handler starts; `answered` says the answers so far went out. `kept`: the
 * host passed a mark file.
 *
 * A mark lists as mates the calls of its isolate next in line when a backlog waits (worker-main.ts,
 * `SHARE_MARK_FROM`), none with a longer timeout than the marked call (the host times them all by its
 * deadline); each runs under the mark if it starts within `SHARED_MARK_MS` of it and before any answer went
 * out (after that the marked call may be answered, and the host would no longer find it pending). The host
 * charges a death under a shared mark to the marked call and fails its listed mates with it (one of them may
 * have been the one running), never re-sending them to crash another worker: the same tenant and bundle pay.
 */
export interface RunningMarks {
  readonly kept: boolean;
  covers(id: number): boolean;
  start(id: number, mates: readonly number[]): void;
  readonly phase: (phase: RunningPhase) => void;
  answered(): void;
}

export const NO_MATES: readonly number[] = [];

/** Writes the running-call mark to the host's file descriptor; no-ops when the host passed none. */
export function runningMarks(fdText: string | undefined): RunningMarks {
  const fd = Number(fdText);
  if (fdText === undefined || !Number.isSafeInteger(fd) || fd < 3) {
    return { kept: false, covers: () => false, start: () => {}, phase: () => {}, answered: () => {} };
  }
  const bytes = new Uint8Array(RUNNING_MARK_BYTES);
  const view = new Float64Array(bytes.buffer);
  let running = 0;
  // The mates of the mark on file, the next of them to come, and when it was written.
  let mates = NO_MATES;
  let nextMate = 0;
  let markedAt = 0;
  let broken = false;
  const write = (phase: RunningPhase, at: number): void => {
    if (broken) return;
    writeRunningMark(view, running, at, phase, mates);
    try {
      writeSync(fd, bytes, 0, RUNNING_MARK_BYTES, 0);
    } catch {
      // Without the mark the host falls back to blaming the oldest unanswered call.
      broken = true;
    }
  };
  return {
    get kept() {
      return !broken;
    },
    covers(id) {
      if (mates[nextMate] !== id || monotonicMs() - markedAt >= SHARED_MARK_MS) return false;
      running = id;
      nextMate++;
      return true;
    },
    start(id, next) {
      running = id;
      mates = next;
      nextMate = 0;
      markedAt = monotonicMs();
      write("run", markedAt);
    },
    phase(phase) {
      // A load or a handler's start names the call itself, with no mates.
      mates = NO_MATES;
      write(phase, monotonicMs());
    },
    answered() {
      mates = NO_MATES;
    },
  };
}
