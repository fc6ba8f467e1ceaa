import {
  admitCall,
  type DescribeOutcome,
  describeOutcomeOf,
  ExecutorClosedError,
  type HookExecutor,
  isRefused,
  type LimitsInput,
  loadTimeoutOf,
  parseLimits,
  type SandboxBundle,
  type SandboxCall,
  type SandboxLimits,
  type SandboxResult,
  type TenantId,
} from "../../src/protocol/index.js";
import { SandboxOptionsError } from "./errors.js";
import { IsolatePool } from "./isolate-pool.js";
import type { IsolatePoolOptions } from "./pool-types.js";

export interface InlineExecutorOptions {
  /** Sandbox limits (docs/architecture.md, "Limits"); validated here. */
  readonly limits?: LimitsInput;
  /** Isolate budgets of the underlying pool. */
  readonly pool?: IsolatePoolOptions;
  /** Suppresses the once-per-process stderr warning that inline mode is for tests and benchmarks only. */
  readonly quiet?: boolean;
}

let warned = false;

/**
 * A `HookExecutor` that keeps isolates in the calling process, on the calling thread: each `execute` runs
 * synchronously and resolves at once, so nothing queues (no `queuedMs`) and `runMs` is the pool's
 * own measure of the handler (a cold call's bundle load is `loadMs`, apart). For tests and benchmarks only — a fatal out-of-memory in a guest
 * aborts the whole process and nothing but the `applySync` timeout bounds a call (docs/architecture.md, "The trust
 * boundary") — so it warns once per process on stderr unless `quiet`.
 *
 * ```ts
 * const executor = createInlineExecutor({ limits: { timeoutMs: 100 }, quiet: true });
 * const { outcome, cost } = await invokeHook(executor, bundle, call, limits);
 * ```
 */
export function createInlineExecutor(options: InlineExecutorOptions = {}): HookExecutor {
  const limits = parseLimits(options.limits, (message) => new SandboxOptionsError(message));
  const sandboxLimits: SandboxLimits = {
    memoryMb: limits.memoryMb,
    maxResultChars: limits.maxResultChars,
    maxStateChars: limits.maxStateChars,
    maxLogLines: limits.maxLogLines,
    maxLogChars: limits.maxLogChars,
    loadTimeoutMs: loadTimeoutOf(limits),
  };
  const pool = new IsolatePool(options.pool);
  if (!options.quiet && !warned) {
    warned = true;
    process.stderr.write(
      "isohook: inline executor — tenant isolates run in this process; for tests and benchmarks only, use the process executor in production\n",
    );
  }
  let closed = false;
  // Observe calls run one per macrotask, after the decision calls already under way on this thread.
  let observeTail: Promise<unknown> = Promise.resolve();

  function ready(bundle: SandboxBundle, signal: AbortSignal | undefined): void {
    if (closed) throw new ExecutorClosedError();
    signal?.throwIfAborted();
    if (!pool.isLoaded(bundle.hash)) pool.load(bundle.hash, bundle.code, sandboxLimits);
  }

  return {
    mode: "inline",
    async execute(bundle: SandboxBundle, call: SandboxCall, signal?: AbortSignal): Promise<SandboxResult> {
      ready(bundle, signal);
      const admitted = admitCall(call, limits);
      if (isRefused(admitted)) return admitted;
      if (admitted.priority !== "observe") return pool.call(bundle.hash, admitted);
      const turn = observeTail.then(() => new Promise((resolve) => setImmediate(resolve)));
      observeTail = turn;
      await turn;
      ready(bundle, signal);
      return pool.call(bundle.hash, admitted);
    },
    async describe(tenantId: TenantId, bundle: SandboxBundle, signal?: AbortSignal): Promise<DescribeOutcome> {
      ready(bundle, signal);
      const result = pool.describe(tenantId, bundle.hash);
      return result.type === "failed" ? result : describeOutcomeOf(result.reply, result);
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await pool.close();
    },
  };
}
