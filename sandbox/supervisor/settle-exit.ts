import type { Failure } from "../../src/protocol/index.js";
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
}

/**
 * Settles every call pending on a worker that ended, at `now`: the culprit (`blame`) as a timeout or a crash,
 * charged from when it ran; every other call as a bystander, except those handed back (returned) to be
 * re-sent once to the replacement (`retriesAfter`).
 */
export function settleAtExit(
  pending: Iterable<PendingCall>,
  ended: EndedWorker,
  blame: Blame,
  now: number,
): PendingCall[] {
  const { reason, pid, how } = ended;
  const { culprit, ran } = blame;
  const retry: PendingCall[] = [];
  for (const entry of pending) {
    if (entry !== culprit) {
      if (retriesAfter(reason, entry)) retry.push(entry);
      else fail(entry, bystanderFailure(reason, pid, how), now);
    } else if (reason === "deadline") {
      const loading = ran?.loading === true;
      const limitMs = loading ? ended.loadTimeoutMs : entry.timeoutMs;
      fail(entry, timeoutFailure(limitMs, ended.killGraceMs, pid, loading), now, ran);
    } else if (reason === "crashed" || reason === "protocol") {
      fail(entry, culpritFailure(reason, pid, how), now, ran);
    } else {
      // Other ends blame no call (culpritOf); settle it all the same.
      fail(entry, bystanderFailure(reason, pid, how), now);
    }
  }
  return retry;
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

/** The call the host killed its worker over (`loading`: it was still loading its bundle, under `limitMs`). */
export function timeoutFailure(limitMs: number, graceMs: number, pid: number, loading: boolean): Failure {
  const what = loading
    ? `bundle did not finish loading within its ${limitMs} ms load timeout`
    : `hook did not finish within its ${limitMs} ms timeout`;
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
