import {
  type HookCall,
  type HookExecutor,
  type HookOutcome,
  type HookPoint,
  type Limits,
  parseGuestReply,
} from "../protocol/index.js";

/** One sandboxed hook call's outcome plus what it cost (see `ExecutionCost`: `durationMs` is its own run time). */
export interface InvokedHook<P extends HookPoint> {
  readonly outcome: HookOutcome<P>;
  readonly cpuMs: number;
  readonly durationMs: number;
  /** Time the call waited in the sandbox without running (other calls ahead on its worker, IPC). */
  readonly queuedMs?: number | undefined;
  /** Time a cold call spent loading its bundle into a fresh isolate before its handler ran. */
  readonly loadMs?: number | undefined;
}

/**
 * Runs one call in the sandbox and turns the guest's reply into a typed outcome. Every path that asks a
 * tenant hook for a decision (the dispatcher, `isohook test`, the deploy gate) goes through here, so guest
 * output is parsed and validated in exactly one place. Never throws for anything the guest does.
 */
export async function invokeHook<P extends HookPoint>(
  executor: HookExecutor,
  call: HookCall & { readonly point: P },
  limits: Limits,
  signal?: AbortSignal,
): Promise<InvokedHook<P>> {
  if (call.eventJson.length > limits.maxEventBytes) {
    return {
      outcome: {
        type: "failed",
        failure: {
          code: "event_too_large",
          message: `The ${call.point} event is ${call.eventJson.length} characters, over the ${limits.maxEventBytes} limit`,
        },
        logs: [],
      },
      cpuMs: 0,
      durationMs: 0,
    };
  }
  const executed = await executor.execute(call, signal);
  const outcome: HookOutcome<P> =
    executed.type === "replied"
      ? parseGuestReply(call.point, executed.reply, limits)
      : { type: "failed", failure: executed.failure, logs: [] };
  const { cpuMs, durationMs, queuedMs, loadMs } = executed;
  return { outcome, cpuMs, durationMs, queuedMs, loadMs };
}
