import type { HookExecutor } from "../../src/protocol/index.js";
import { HOLD_SLICE_MS } from "./held-calls.js";
import { checkCommonOptions, type ExecutorOptions, resolveLimits, resolveProcessOptions } from "./options.js";
import { ProcessExecutor } from "./process-executor.js";
import { workerSpawnSpec } from "./spawn-spec.js";

/**
 * Creates the executor that runs tenant hooks — the one factory host code uses.
 *
 * `process` (default) forks `workers` sandbox worker processes (default: CPU cores) and resolves once they
 * are ready; `inline` keeps isolates in this process and is for tests and benchmarks only (isolated-vm is
 * loaded only then, with a dynamic import). Options are validated here: a wrong one throws
 * `ExecutorOptionsError` naming it. Close the executor when done; `close()` resolves once every worker
 * process has exited.
 *
 * @example
 * const executor = await createHookExecutor({ limits: { timeoutMs: 50, memoryMb: 32 } });
 * const { outcome, cost } = await invokeHook(executor, bundle, call, limits);
 * await executor.close();
 * @throws {ExecutorOptionsError} for a wrong option; {SandboxStartError} when the workers cannot start.
 */
export async function createHookExecutor(options: ExecutorOptions = {}): Promise<HookExecutor> {
  const mode = checkCommonOptions(options);
  if (mode === "process") return startProcessExecutor(options);
  const limits = resolveLimits(options.limits);
  options.signal?.throwIfAborted();
  const { createInlineExecutor } = await import("../worker/index.js");
  return createInlineExecutor({ limits });
}

/**
 * Internal knobs for tests and the benchmark: another worker entry (a stand-in), extra Node flags (e.g.
 * `--cpu-prof`), and the slice after which calls held behind a long one move to another worker (relief.ts;
 * default `HOLD_SLICE_MS`, 0 turns relief off for tests of what happens to calls left behind).
 */
export interface ProcessInternals {
  readonly workerEntry?: string;
  readonly execArgv?: readonly string[];
  readonly holdSliceMs?: number;
}

/** `createHookExecutor` in process mode, typed as the `ProcessExecutor` (with `workers()` for health checks). */
export async function startProcessExecutor(
  options: Omit<ExecutorOptions, "mode"> = {},
  internals: ProcessInternals = {},
): Promise<ProcessExecutor> {
  checkCommonOptions(options);
  const resolved = resolveProcessOptions(options);
  options.signal?.throwIfAborted();
  const spec = workerSpawnSpec(internals.workerEntry);
  const execArgv = internals.execArgv === undefined ? spec.execArgv : [...spec.execArgv, ...internals.execArgv];
  const executor = new ProcessExecutor(resolved, { ...spec, execArgv }, internals.holdSliceMs ?? HOLD_SLICE_MS);
  await executor.started(options.signal);
  return executor;
}
