import {
  admitCall,
  type HookExecutor,
  type HookOutcome,
  type HookPoint,
  isRefused,
  type Limits,
  parseGuestReply,
  type SandboxBundle,
  type SandboxCall,
  type SandboxCost,
} from "../protocol/index.js";

/** One sandboxed hook call's typed outcome and what it cost (the executor's `SandboxResult`, referenced). */
export interface InvokedHook<P extends HookPoint> {
  readonly outcome: HookOutcome<P>;
  readonly cost: SandboxCost;
}

/**
 * Runs one call in the sandbox and turns the guest's reply into a typed outcome. Every path that asks a
 * tenant hook for a decision (the dispatcher, `isohook test`, the deploy gate) goes through here, so guest
 * output is parsed and validated in exactly one place. `admitCall` checks the call against these limits
 * (event size, timeout) before it reaches the executor, which checks it against its own. Never throws for
 * anything the guest does.
 */
export async function invokeHook<P extends HookPoint>(
  executor: HookExecutor,
  bundle: SandboxBundle,
  call: SandboxCall & { readonly point: P },
  limits: Limits,
  signal?: AbortSignal,
): Promise<InvokedHook<P>> {
  const admitted = admitCall(call, limits);
  const result = isRefused(admitted) ? admitted : await executor.execute(bundle, admitted, signal);
  const outcome: HookOutcome<P> =
    result.type === "replied"
      ? parseGuestReply(call.point, result.reply, limits)
      : { type: "failed", failure: result.failure, logs: [] };
  return { outcome, cost: result };
}
