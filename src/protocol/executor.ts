import type { HookPoint } from "./hook-points.js";
import type { BundleHash, TenantId } from "./ids.js";
import type { Failure } from "./outcome.js";

/** A bundle as the sandbox needs it: its content hash and the one script the bundler produced. */
export interface SandboxBundle {
  readonly hash: BundleHash;
  readonly code: string;
}

/** One call into the sandbox. Event and ctx are JSON strings already: the sandbox moves, never parses, them. */
export interface HookCall {
  readonly tenantId: TenantId;
  readonly bundle: SandboxBundle;
  readonly point: HookPoint;
  readonly eventJson: string;
  readonly ctxJson: string;
  /**
   * Overrides the executor's per-call timeout downwards (e.g. what is left of a turn budget). Like the
   * executor's, it bounds the handler only: a cold isolate's bundle evaluation has its own load timeout.
   */
  readonly timeoutMs?: number;
}

/**
 * What a sandbox call cost, split so that no tenant is charged for another's time (DESIGN §4, budgets):
 *
 * - `durationMs`: wall time the call's handler ran in the sandbox, measured where it ran (the worker's
 *   clock around this call alone; for a call the host killed, from when it started running to the kill; 0
 *   for a call that never ran). Never includes time spent queued behind other calls, other tenants'
 *   included, nor loading the bundle. Hook time budgets charge exactly this.
 * - `cpuMs`: CPU time of the isolate over the same span.
 * - `loadMs`: wall time a cold call (no warm isolate for its tenant and bundle: first call, or the isolate
 *   was recycled or evicted) spent before its handler creating the isolate and evaluating the bundle.
 *   Bounded by the load timeout (`Limits.loadTimeoutMs`), not by the call's; not charged to budgets, as
 *   an isolate may be recreated for reasons that are not the tenant's. Absent on a warm call.
 * - `queuedMs`: wall time the call waited and was not running: behind other calls on its worker, for a
 *   worker to be (re)started, in transit over IPC. Absent in inline mode (nothing queues there).
 *
 * The caller waited about `queuedMs + loadMs + durationMs`.
 */
export interface ExecutionCost {
  cpuMs: number;
  durationMs: number;
  loadMs?: number;
  queuedMs?: number;
}

/**
 * How a sandbox call ended, before the host looks at what the guest said. `replied` carries the guest's
 * reply string unparsed: `parseGuestReply` (src/protocol) turns it into a decision, in one place.
 */
export type ExecutionOutcome =
  | ({ type: "replied"; reply: string } & ExecutionCost)
  | ({ type: "failed"; failure: Failure } & ExecutionCost);

/**
 * What a bundle exports, read by evaluating it in the sandbox: the handler keys of its default export.
 * `durationMs` is the describe's own run time in the sandbox, bundle evaluation included; `queuedMs` as in
 * `ExecutionCost`.
 */
export type DescribeOutcome =
  | { type: "described"; handlers: string[]; cpuMs: number; durationMs: number; queuedMs?: number }
  | { type: "failed"; failure: Failure; cpuMs: number; durationMs: number; queuedMs?: number };

/**
 * Runs bundled hooks in V8 isolates. `process` (the default) keeps isolates in supervised worker
 * processes; `inline` keeps them in the calling process and is for tests and benchmarks only.
 * `execute` never rejects for anything the guest does; it rejects only after `close()` or on abort.
 */
export interface HookExecutor {
  readonly mode: "process" | "inline";
  execute(call: HookCall, signal?: AbortSignal): Promise<ExecutionOutcome>;
  /**
   * Evaluates a bundle in a fresh isolate and lists the keys of its default export (validated and capped
   * by the host). Used by the bundler's manifest and the deploy gate: the host never evaluates tenant code.
   */
  describe(tenantId: TenantId, bundle: SandboxBundle, signal?: AbortSignal): Promise<DescribeOutcome>;
  close(): Promise<void>;
}
