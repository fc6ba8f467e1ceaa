import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import type { HookExecutor, LimitsInput } from "../protocol/index.js";
import { CliError, integerFlag, type OptionSpec, type ParsedArgs } from "./command.js";

/** `--timeout <ms>` and `--memory <mb>`, for commands that run hooks in the sandbox. */
export const LIMITS_OPTIONS: OptionSpec = { timeout: { type: "string" }, memory: { type: "string" } };

/** The sandbox limits given by `--timeout` (1-60000 ms) and `--memory` (8-2048 MB); the rest default. */
export function limitsOf(args: ParsedArgs): LimitsInput {
  const limits: LimitsInput = {};
  const timeoutMs = integerFlag(args, "timeout", 1, 60_000);
  const memoryMb = integerFlag(args, "memory", 8, 2_048);
  if (timeoutMs !== undefined) limits.timeoutMs = timeoutMs;
  if (memoryMb !== undefined) limits.memoryMb = memoryMb;
  return limits;
}

/** What a command that runs hooks needs from outside; tests may pass another executor. */
export interface SandboxDeps {
  /** Opens the sandbox the hooks run in, with these limits; the command closes it. */
  readonly openExecutor: (limits: LimitsInput, signal?: AbortSignal) => Promise<HookExecutor>;
}

/** The default: the real process sandbox, one worker, no spare. */
export const processSandbox: SandboxDeps = {
  openExecutor: (limits, signal) =>
    createHookExecutor({ workers: 1, spareWorker: false, limits, ...(signal ? { signal } : {}) }),
};

/** Opens the sandbox; a failure to start is a CliError (`sandbox_unavailable`, or `aborted`). */
export async function openSandbox(
  deps: SandboxDeps,
  limits: LimitsInput,
  signal: AbortSignal | undefined,
): Promise<HookExecutor> {
  try {
    return await deps.openExecutor(limits, signal);
  } catch (error) {
    if (signal?.aborted) throw new CliError("Aborted", "aborted");
    const reason = error instanceof Error ? error.message : String(error);
    throw new CliError(`Cannot start the sandbox: ${reason}`, "sandbox_unavailable");
  }
}
