import {
  type DescribeOutcome,
  describeOutcomeOf,
  type Failure,
  type SandboxBundle,
  type SandboxCall,
  type SandboxResult,
  type TenantId,
  type WorkerResponse,
} from "../../src/protocol/index.js";

/** How long `describe` may take in the worker (IsolatePool's default). */
export const DESCRIBE_TIMEOUT_MS = 1_000;

interface Pending {
  /** When the host sent it (its deadline never counts from earlier). */
  readonly sentAt: number;
  /** When the caller asked for it (earlier than `sentAt` if it waited for a worker); `queuedMs` counts from here. */
  readonly askedAt: number;
  readonly timeoutMs: number;
  /** Set while an AbortSignal is attached. */
  abort: (() => void) | undefined;
  signal: AbortSignal | undefined;
  /** The caller has its result (or its abort); a later answer is dropped. */
  answered: boolean;
}

/**
 * A call or describe sent to a worker and not answered yet. Settles exactly once. A `call` keeps its bundle
 * and call so that a bystander of a worker's death can be re-sent once to its replacement (`retried` marks
 * the re-sent copy: a second death settles it as a bystander), and so that a call held behind a long one
 * can be sent to another worker (`relieved` counts the moves; relief.ts).
 */
export type PendingCall =
  | (Pending & {
      readonly kind: "call";
      readonly bundle: SandboxBundle;
      readonly call: SandboxCall;
      readonly retried: boolean;
      readonly relieved: number;
      readonly resolve: (result: SandboxResult) => void;
    })
  | (Pending & { readonly kind: "describe"; readonly resolve: (outcome: DescribeOutcome) => void });

/** A pending call sent now; `askedAt` defaults to now (the caller did not wait for a worker). */
export function pendingCall(
  bundle: SandboxBundle,
  call: SandboxCall,
  resolve: (result: SandboxResult) => void,
  askedAt?: number,
): PendingCall & { kind: "call" } {
  const sentAt = performance.now();
  return {
    kind: "call",
    bundle,
    call,
    retried: false,
    relieved: 0,
    resolve,
    sentAt,
    askedAt: askedAt ?? sentAt,
    timeoutMs: call.timeoutMs,
    abort: undefined,
    signal: undefined,
    answered: false,
  };
}

/**
 * The copy of a call re-sent now: a bystander of a worker's death (`retry`) or a call taken off a held
 * worker (`relief`). Its wait still counts from when the caller first asked.
 */
export function resentOf(
  previous: PendingCall & { kind: "call" },
  why: "retry" | "relief",
): PendingCall & { kind: "call" } {
  const { bundle, call, resolve, askedAt, timeoutMs } = previous;
  const sentAt = performance.now();
  const base = { sentAt, askedAt, timeoutMs, abort: undefined, signal: undefined, answered: false };
  const retried = why === "retry" || previous.retried;
  const relieved = previous.relieved + (why === "relief" ? 1 : 0);
  return { ...base, kind: "call", bundle, call, retried, relieved, resolve };
}

export function pendingDescribe(resolve: (outcome: DescribeOutcome) => void, askedAt?: number): PendingCall {
  const sentAt = performance.now();
  const base = { sentAt, askedAt: askedAt ?? sentAt, timeoutMs: DESCRIBE_TIMEOUT_MS };
  return { ...base, kind: "describe", resolve, abort: undefined, signal: undefined, answered: false };
}

function settle(entry: PendingCall): boolean {
  if (entry.answered) return false;
  entry.answered = true;
  if (entry.abort !== undefined) entry.signal?.removeEventListener("abort", entry.abort);
  return true;
}

/** Hands a settled result to the caller: a call's as is, a describe's reply parsed (it is untrusted). */
function deliver(entry: PendingCall, result: SandboxResult): void {
  if (entry.kind === "call") entry.resolve(result);
  else entry.resolve(result.type === "failed" ? result : describeOutcomeOf(result.reply, result));
}

/**
 * Settles `entry` with the worker's result, completed in place (it is the host's own copy, fresh from the
 * channel). `runMs` (and `loadMs` on a cold call) are the worker's own measures, never more than the host
 * waited; the rest of the wait is `queuedMs`: other calls ahead on the worker, transit.
 */
export function answer(entry: PendingCall, response: Extract<WorkerResponse, { kind: "result" }>, now: number): void {
  if (!settle(entry)) return;
  const result: SandboxResult = response.result;
  const waited = now - entry.askedAt;
  result.runMs = Math.min(Math.max(0, result.runMs), waited);
  const loadMs = result.loadMs;
  if (loadMs !== undefined) result.loadMs = Math.min(Math.max(0, loadMs), waited - result.runMs);
  result.queuedMs = waited - result.runMs - (result.loadMs ?? 0);
  deliver(entry, result);
}

/**
 * Settles `entry` with a failure the host decided (the worker ended, or the call was refused). `ran` is
 * the call the worker died or was killed in: it is charged from when it started running (as `loadMs` if it
 * was still loading its bundle), and its `cpuMs` is `cpuMs` if the host measured it, else its whole run
 * (the worker cannot say). A call that never ran has `runMs` and `cpuMs` 0 and all its wait as `queuedMs`.
 */
export function fail(
  entry: PendingCall,
  failure: Failure,
  now: number,
  ran?: { readonly startedAt: number; readonly loading: boolean },
  cpuMs?: number,
): void {
  if (!settle(entry)) return;
  const started = ran === undefined ? now : Math.min(now, Math.max(entry.askedAt, ran.startedAt));
  const loading = ran?.loading === true;
  const result: SandboxResult = {
    type: "failed",
    failure,
    cpuMs: ran === undefined ? 0 : (cpuMs ?? now - started),
    runMs: loading ? 0 : now - started,
    queuedMs: started - entry.askedAt,
  };
  if (loading) result.loadMs = now - started;
  deliver(entry, result);
}

export function overloaded(tenantId: TenantId, pending: number): SandboxResult & { type: "failed" } {
  const message =
    `The sandbox worker for tenant ${tenantId} has ${pending} calls pending, its limit; ` +
    "retry later or raise maxPendingPerWorker";
  return { type: "failed", failure: { code: "unavailable", message }, cpuMs: 0, runMs: 0, queuedMs: 0 };
}
