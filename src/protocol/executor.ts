import type { ParsedDescribe } from "./describe-reply.js";
import type { BundleHash, TenantId } from "./ids.js";
import type { Limits } from "./limits.js";
import type { Failure, FailureCode } from "./outcome.js";

/** A bundle as the sandbox needs it: its content hash (its identity) and the one script the bundler produced. */
export interface SandboxBundle {
  readonly hash: BundleHash;
  readonly code: string;
}

/**
 * One hook call into the sandbox, the same object from the dispatcher to the isolate: the executor takes
 * it, the wire carries it (`WorkerRequest` "call") and the isolate pool runs it. Event and ctx are JSON
 * strings already: the sandbox moves, never parses, them. The bundle travels beside it (`execute(bundle,
 * call)`), as the worker loads a bundle once and runs many calls on it.
 */
export interface SandboxCall {
  readonly tenantId: TenantId;
  /** A hook point name (`tool.call`); an unknown one fails as `unavailable`. */
  readonly point: string;
  readonly eventJson: string;
  readonly ctxJson: string;
  /**
   * Bound on the handler, in ms: the executor clamps it to its own `limits.timeoutMs` (`admitCall`). A cold
   * isolate's bundle evaluation has its own load timeout (`Limits.loadTimeoutMs`), which this does not cover.
   */
  readonly timeoutMs: number;
  /**
   * `observe`: an observe-only handler's call (`defineHooks({ observe: { … } })`). The guest runs the
   * bundle's observe handler for the point and discards what it returns; the executor runs it behind every
   * decision call waiting for the same worker, never ahead of one (docs/architecture.md, "Observe-only
   * hooks"). Absent: a decision call.
   */
  readonly priority?: "observe" | undefined;
}

/**
 * What a sandbox call cost, split so that no tenant is charged for another's time (docs/architecture.md, "Failure is
 * data"). One record from the isolate to the provenance record (`HookRecord`): each stage fills in what it sees.
 *
 * - `runMs`: wall time the call's handler ran in the sandbox, measured where it ran (the worker's clock
 *   around this call alone; for a call the host killed, from when it started running to the kill; 0 for a
 *   call that never ran). Never includes time queued behind other calls nor loading the bundle. Hook time
 *   budgets charge exactly this.
 * - `cpuMs`: CPU time of the thread running the isolate over the same span (what the timeout limits and
 *   quarantine reads); for a call the host killed, the CPU its worker burnt while the call was overdue.
 * - `loadMs`: wall time a cold call (no warm isolate for its tenant and bundle) spent before its handler
 *   creating the isolate and evaluating the bundle. Bounded by the load timeout, not by the call's. Absent
 *   on a warm call. Not charged to budgets unless `loadAfterRecycle`: a first load, an eviction or a worker
 *   restart is not the tenant's doing.
 * - `loadAfterRecycle`: set with `loadMs` when the worker knows the load was the tenant's own doing: the
 *   isolate it replaces was recycled after this tenant's own failure on this bundle (a timeout, memory
 *   event or error outside the prelude's control), or the previous load failed on the bundle's code. Budgets
 *   then charge `loadMs` too, and a reload that makes the call outlast its timeout is a quarantine strike
 *   (docs/architecture.md, "Reloads a tenant causes").
 * - `evicted`: isolates the worker disposed to make room for this call (its count or heap budget, least
 *   recently used first); absent when none. Idle isolates disposed between calls (`maxIdleMs`) are not
 *   counted here.
 * - `queuedMs`: wall time the call waited and was not running: behind other calls on its worker, for a
 *   worker to be (re)started, in transit on the channel. Absent in inline mode (nothing queues there).
 *
 * The caller waited about `queuedMs + loadMs + runMs`.
 */
export interface SandboxCost {
  cpuMs: number;
  runMs: number;
  loadMs?: number | undefined;
  loadAfterRecycle?: true | undefined;
  evicted?: number | undefined;
  queuedMs?: number | undefined;
}

/**
 * How a sandbox call ended, before the host looks at what the guest said: the isolate pool returns it, the
 * wire carries it and the executor resolves with it (adding `queuedMs`). `replied` carries the prelude's
 * reply string unparsed: `parseGuestReply` (a `GuestReply`) or `parseDescribeReply` turns it into host
 * values, in one place. `failed` is what the guest could not report itself: a timeout, a memory-limit
 * disposal, a crash, an unknown bundle, a bundle that fails to load, a call refused by `admitCall`. `C`
 * narrows the failure codes (a worker reports `WorkerFailureCode`s only).
 */
export type SandboxResult<C extends FailureCode = FailureCode> = (
  | { type: "replied"; reply: string }
  | { type: "failed"; failure: Failure & { code: C } }
) &
  SandboxCost;

/**
 * What a bundle exports, read by evaluating it in the sandbox: the handler keys of its default export, the
 * tool globs of those written `{ tools, handler }`, and the same for its `observe` object.
 */
export type DescribeOutcome = ParsedDescribe & SandboxCost;

/**
 * Runs bundled hooks in V8 isolates. `process` (the default) keeps isolates in supervised worker
 * processes; `inline` keeps them in the calling process and is for tests and benchmarks only.
 * `execute` never rejects for anything the guest does; it rejects only after `close()` or on abort.
 */
export interface HookExecutor {
  readonly mode: "process" | "inline";
  /** Runs `call` on `bundle` (loaded into the sandbox first if it is not there yet). */
  execute(bundle: SandboxBundle, call: SandboxCall, signal?: AbortSignal): Promise<SandboxResult>;
  /**
   * Evaluates a bundle in a fresh isolate and lists the keys of its default export (validated and capped
   * by the host). Used by the bundler's manifest and the deploy gate: the host never evaluates tenant code.
   */
  describe(tenantId: TenantId, bundle: SandboxBundle, signal?: AbortSignal): Promise<DescribeOutcome>;
  close(): Promise<void>;
}

/** `execute` or `describe` after `close()`, from either executor (one class, so `instanceof` holds in both modes). */
export class ExecutorClosedError extends Error {
  override readonly name = "ExecutorClosedError";
  readonly code = "executor_closed";
  constructor() {
    super("The hook executor is closed. Create a new one with createHookExecutor() to run more calls.");
  }
}

/**
 * The checks every executor makes before a call crosses into the sandbox, in one place: the event's size
 * (`maxEventChars`, in UTF-16 code units) and the timeout, clamped to the executor's limit and rounded up.
 * Returns the call to send (the same object unless its timeout was clamped) or the failure to answer with.
 */
export function admitCall(
  call: SandboxCall,
  limits: Pick<Limits, "timeoutMs" | "maxEventChars">,
): SandboxCall | SandboxResult {
  if (call.eventJson.length > limits.maxEventChars) {
    const message = `The ${call.point} event is ${call.eventJson.length} characters, over the ${limits.maxEventChars} limit`;
    return { type: "failed", failure: { code: "event_too_large", message }, cpuMs: 0, runMs: 0 };
  }
  const requested = call.timeoutMs;
  if (requested >= limits.timeoutMs)
    return requested === limits.timeoutMs ? call : { ...call, timeoutMs: limits.timeoutMs };
  if (!(requested > 0)) {
    const message = `The hook had no time left to run (${requested} ms of budget)`;
    return { type: "failed", failure: { code: "timeout", message }, cpuMs: 0, runMs: 0 };
  }
  return Number.isInteger(requested) ? call : { ...call, timeoutMs: Math.ceil(requested) };
}

/** Whether `admitCall` refused the call. */
export function isRefused(admitted: SandboxCall | SandboxResult): admitted is SandboxResult {
  return "type" in admitted;
}
