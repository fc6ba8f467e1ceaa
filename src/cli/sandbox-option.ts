import { createHookExecutor } from "../../sandbox/supervisor/index.js";
import type { HookExecutor, LimitsInput } from "../protocol/index.js";
import { CliError } from "./command.js";

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
