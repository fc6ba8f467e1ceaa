import { type Failure, MAX_WALL_BACKSTOP_FACTOR, maxWallBackstopOf } from "../../src/protocol/index.js";
import type { Blame } from "./call-deadline.js";
import type { WorkerExitReason } from "./events.js";
import { fail, type PendingCall } from "./pending-call.js";

/** How a worker ended, as the calls still pending on it are told. */
export interface EndedWorker {
  readonly reason: WorkerExitReason;
  readonly pid: number;
  /** "signal SIGABRT" or "exit code 1". */
  readonly how: string;
  readonly loadTimeoutMs: number;
  readonly killGraceMs: number;
  /** The isolates' memory limit: a call that grew its worker by more while overdue was a memory bomb. */
  readonly memoryMb: number;
  /** The worker's last stderr is V8's or isolated-vm's out-of-memory report (`diedOutOfMemory`). */
  readonly outOfMemory: boolean;
}

/**
 * Settles every call pending on a worker that ended, at `now`: the culprit (`blame`) as a timeout, a memory
 * failure or a crash, charged from when it ran; the calls that ran under its mark (`blame.mates`, of its
 * own isolate, one of which may have been the one running) as bystanders of their own hook, never re-sent
 * to crash another worker; every other call as a bystander, except those handed back (returned) to be
 * re-sent once to the replacement (`retriesAfter`).
 *
 * The culprit's code says what the worker's end shows: `memory_limit` when it aborted printing an
 * out-of-memory report, or was killed over its deadline having grown by more than the isolate's memory
 * limit while overdue (a bomb in a builtin no timeout interrupts, e.g. `new Array(1e8).fill(0)`); else
 * `timeout` for a kill, with `cpuMs` the CPU its worker burnt while overdue (what quarantine reads: a worker
 * that slept or was starved burnt none), and `sandbox_crashed` for any other death.
 */
export function settleAtExit(
  pending: Iterable<PendingCall>,
  ended: EndedWorker,
  blame: Blame,
  now: number,
): PendingCall[] {
  const { reason, pid, how } = ended;
  const { culprit, ran, mates, overdue } = blame;
  const retry: PendingCall[] = [];
  for (const entry of pending) {
    if (entry !== culprit) {
      if (mates.includes(entry)) fail(entry, mateFailure(pid, how), now);
      else if (retriesAfter(reason, entry)) retry.push(entry);
      else fail(entry, bystanderFailure(reason, pid, how), now);
    } else if (reason === "deadline") {
      const loading = ran?.loading === true;
      const limitMs = loading ? ended.loadTimeoutMs : entry.timeoutMs;
      const bomb = overdue !== undefined && overdue.grewBytes > ended.memoryMb * 1024 * 1024;
      const failure = bomb
        ? memoryFailure(ended.memoryMb, pid, "grew past it and stopped answering, so the worker was killed")
        : timeoutFailure(limitMs, ended.killGraceMs, pid, loading ? "load" : entry.kind);
      // Where /proc could not be read the host cannot tell, and takes the time as the call's CPU (a strike).
      fail(entry, failure, now, ran, overdue?.cpuMs);
    } else if (reason === "crashed" && ended.outOfMemory) {
      fail(entry, memoryFailure(ended.memoryMb, pid, `ran out of memory and its worker died (${how})`), now, ran);
    } else if (reason === "crashed" || reason === "protocol") {
      fail(entry, culpritFailure(reason, pid, how), now, ran);
    } else {
      // Other ends blame no call (culpritOf); settle it all the same.
      fail(entry, bystanderFailure(reason, pid, how), now);
    }
  }
  return retry;
}

/**
 * A call that ran under the culprit's running mark, of the same tenant and bundle: it may have been the one
 * running, so it is not re-sent; the culprit took the strike, so it counts for none.
 */
export function mateFailure(pid: number, how: string): Failure {
  return {
    code: "sandbox_crashed",
    message: `The sandbox worker (pid ${pid}) ended (${how}) while running this hook's calls in a row; this call was one of them and is not re-sent, and the call marked running took the strike`,
    bystander: true,
  };
}

/** Whether a call pending on a worker that ended (not the culprit) is re-sent once to its replacement. */
export function retriesAfter(reason: WorkerExitReason, entry: PendingCall): boolean {
  return (
    entry.kind === "call" &&
    !entry.retried &&
    !entry.answered &&
    (reason === "crashed" || reason === "deadline" || reason === "protocol")
  );
}

/**
 * V8's fatal out-of-memory report (isolated-vm prints `is_heap_oom = 1` and the heap statistics, V8 the
 * last few GCs) in the tail of what a worker wrote to stderr before it died: the call it was running
 * exhausted memory. Tenant code cannot write to the worker's stderr (its console is captured).
 */
export function diedOutOfMemory(stderrTail: string): boolean {
  return /is_heap_oom = \d|<--- Last few GCs --->|out of memory/i.test(stderrTail);
}

/** The call that exhausted its isolate's memory so that its worker died or had to be killed. */
export function memoryFailure(memoryMb: number, pid: number, what: string): Failure {
  return {
    code: "memory_limit",
    message: `The hook exceeded its ${memoryMb} MB memory limit in a way the isolate could not stop: its sandbox worker (pid ${pid}) ${what}`,
  };
}

/**
 * The call the host killed its worker over: in its handler (`limitMs` its timeout, whose wall-clock backstop
 * it outlasted), loading its bundle (`limitMs` the load timeout) or describing it.
 */
export function timeoutFailure(
  limitMs: number,
  graceMs: number,
  pid: number,
  phase: "call" | "load" | "describe",
): Failure {
  const what =
    phase === "call"
      ? `hook did not finish within its ${maxWallBackstopOf(limitMs)} ms wall-clock backstop (${MAX_WALL_BACKSTOP_FACTOR}× its ${limitMs} ms timeout)`
      : phase === "load"
        ? `bundle did not finish loading within its ${limitMs} ms load timeout`
        : `bundle was not described within ${limitMs} ms`;
  return {
    code: "timeout",
    message: `The ${what} and its sandbox worker (pid ${pid}) did not answer for ${graceMs} ms more, so the worker was killed`,
  };
}

/** The call that was running when its worker died or misbehaved (not killed over a deadline). */
export function culpritFailure(reason: "crashed" | "protocol", pid: number, how: string): Failure {
  return reason === "crashed"
    ? {
        code: "sandbox_crashed",
        message: `The sandbox worker (pid ${pid}) died (${how}) while running this call, e.g. the hook exhausted V8 memory`,
      }
    : {
        code: "sandbox_crashed",
        message: `The sandbox worker (pid ${pid}) sent a malformed message while running this call and was killed`,
      };
}

/**
 * Every other call pending on a worker that ended; `how` is "signal SIGABRT" or "exit code 1". These calls
 * were not running (queued, or done with the answer not yet delivered), so they are bystanders: quarantine
 * does not count them. The message never names the tenant whose call was running.
 */
export function bystanderFailure(reason: WorkerExitReason, pid: number, how: string): Failure {
  const notCounted = "this call was pending on it but not running, so it does not count towards quarantine";
  switch (reason) {
    case "closed":
      return { code: "unavailable", message: "The hook executor was closed while this call was pending" };
    case "crashed":
      return {
        code: "sandbox_crashed",
        message: `The sandbox worker (pid ${pid}) died (${how}); ${notCounted}`,
        bystander: true,
      };
    case "deadline":
      return {
        code: "sandbox_crashed",
        message: `The sandbox worker (pid ${pid}) was killed because another call on it stopped answering; ${notCounted}`,
        bystander: true,
      };
    case "protocol":
      return {
        code: "sandbox_crashed",
        message: `The sandbox worker (pid ${pid}) sent a malformed message and was killed; ${notCounted}`,
        bystander: true,
      };
    case "boot":
      return {
        code: "sandbox_crashed",
        message: `The sandbox worker (pid ${pid}) ended (${how}) before it was ready; ${notCounted}`,
        bystander: true,
      };
    case "recycled":
      return {
        code: "sandbox_crashed",
        message: `The sandbox worker (pid ${pid}) was recycled with this call pending; ${notCounted}`,
        bystander: true,
      };
    default: {
      const never: never = reason;
      return never;
    }
  }
}
