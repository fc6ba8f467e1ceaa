import type {
  DescribeOutcome,
  ExecutionOutcome,
  Failure,
  HookCall,
  TenantId,
  WorkerResponse,
} from "../../src/protocol/index.js";
import { describeOutcomeOf } from "./describe-outcome.js";
import type { WorkerExitReason } from "./events.js";

/** A call or describe sent to a worker and not answered yet. Settles exactly once. */
export interface PendingCall {
  /** When the host sent it (its deadline never counts from earlier). */
  readonly sentAt: number;
  /** When the caller asked for it (earlier than `sentAt` if it waited for a worker); `queuedMs` counts from here. */
  readonly askedAt: number;
  readonly timeoutMs: number;
  readonly call: ((outcome: ExecutionOutcome) => void) | undefined;
  readonly describe: ((outcome: DescribeOutcome) => void) | undefined;
  /** The call, kept so a bystander of a worker's death can be re-sent once to its replacement. */
  readonly request: HookCall | undefined;
  /** This is the re-sent copy of a bystander: a second death settles it as one. */
  readonly retried: boolean;
  /** Set while an AbortSignal is attached. */
  abort: (() => void) | undefined;
  signal: AbortSignal | undefined;
  /** The caller has its outcome (or its abort); a later answer is dropped. */
  answered: boolean;
}

/**
 * A new pending entry, sent now; `askedAt` defaults to now (the caller did not wait for a worker).
 * Positional, not an options object: this runs once per hook call.
 */
export function pendingEntry(
  request: HookCall | undefined,
  timeoutMs: number,
  askedAt: number | undefined,
  retried: boolean,
  call: PendingCall["call"],
  describe: PendingCall["describe"],
): PendingCall {
  const sentAt = performance.now();
  return {
    sentAt,
    askedAt: askedAt ?? sentAt,
    timeoutMs,
    call,
    describe,
    request,
    retried,
    abort: undefined,
    signal: undefined,
    answered: false,
  };
}

type FailedOutcome = {
  type: "failed";
  failure: Failure;
  cpuMs: number;
  durationMs: number;
  queuedMs: number;
  loadMs?: number;
};

function settle(entry: PendingCall): boolean {
  if (entry.answered) return false;
  entry.answered = true;
  if (entry.abort !== undefined) entry.signal?.removeEventListener("abort", entry.abort);
  return true;
}

/**
 * Settles `entry` with the worker's answer. `durationMs` (and `loadMs` on a cold call) are the worker's
 * own measures (never more than the host waited); the rest of the wait is `queuedMs`: other calls ahead on
 * the worker, IPC.
 */
export function answer(entry: PendingCall, response: Exclude<WorkerResponse, { kind: "ready" }>, now: number): void {
  if (!settle(entry)) return;
  const waited = now - entry.askedAt;
  const durationMs = Math.min(Math.max(0, response.wallMs), waited);
  const loadMs =
    response.loadMs === undefined ? undefined : Math.min(Math.max(0, response.loadMs), waited - durationMs);
  const queuedMs = waited - durationMs - (loadMs ?? 0);
  if (response.kind === "failed") {
    const failure = { code: response.code, message: response.message };
    const failed: FailedOutcome = { type: "failed", failure, cpuMs: response.cpuMs, durationMs, queuedMs };
    if (loadMs !== undefined) failed.loadMs = loadMs;
    entry.call?.(failed);
    entry.describe?.(failed);
    return;
  }
  if (entry.call !== undefined) {
    const replied: ExecutionOutcome = {
      type: "replied",
      reply: response.reply,
      cpuMs: response.cpuMs,
      durationMs,
      queuedMs,
    };
    if (loadMs !== undefined) replied.loadMs = loadMs;
    entry.call(replied);
  }
  entry.describe?.(describeOutcomeOf(response.reply, response.cpuMs, durationMs, queuedMs));
}

/**
 * Settles `entry` with a failure the host decided (the worker ended, or the call was refused). `ran` is
 * the call the worker died or was killed in: it is charged from when it started running (as `loadMs` if it
 * was still loading its bundle). A call that never ran has `durationMs` 0 and all its wait as `queuedMs`.
 */
export function fail(
  entry: PendingCall,
  failure: Failure,
  now: number,
  ran?: { readonly startedAt: number; readonly loading: boolean },
): void {
  if (!settle(entry)) return;
  const started = ran === undefined ? now : Math.min(now, Math.max(entry.askedAt, ran.startedAt));
  const failed: FailedOutcome = {
    type: "failed",
    failure,
    cpuMs: 0,
    durationMs: ran?.loading === true ? 0 : now - started,
    queuedMs: started - entry.askedAt,
  };
  if (ran?.loading === true) failed.loadMs = now - started;
  entry.call?.(failed);
  entry.describe?.(failed);
}

/** Whether a call pending on a worker that ended (not the culprit) is re-sent once to its replacement. */
export function retriesAfter(reason: WorkerExitReason, entry: PendingCall): boolean {
  return (
    entry.request !== undefined &&
    !entry.retried &&
    !entry.answered &&
    (reason === "crashed" || reason === "deadline" || reason === "protocol")
  );
}

export function overloaded(tenantId: TenantId, pending: number): FailedOutcome {
  const message =
    `The sandbox worker for tenant ${tenantId} has ${pending} calls pending, its limit; ` +
    "retry later or raise maxPendingPerWorker";
  return { type: "failed", failure: { code: "unavailable", message }, cpuMs: 0, durationMs: 0, queuedMs: 0 };
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
