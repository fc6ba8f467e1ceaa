import type { PendingCall } from "./pending-call.js";
/**
 * Why a worker process ended: `crashed` (it died on its own, e.g. a fatal V8 out-of-memory), `deadline`
 * (the host killed it for not answering a call in time), `recycled` (drained after passing its RSS cap),
 * `protocol` (it sent a message that is not a `WorkerResponse`), `boot` (it never said it was ready),
 * `closed` (the executor shut down).
 */
export type WorkerExitReason = "crashed" | "deadline" | "recycled" | "protocol" | "boot" | "closed";

/** Worker lifecycle events, for logs and runtime events. `slot` is the shard index (-1 for the spare). */
export type SupervisorEvent =
  | { readonly type: "worker_started"; readonly slot: number; readonly pid: number }
  | {
      readonly type: "worker_exited";
      readonly slot: number;
      readonly pid: number;
      readonly reason: WorkerExitReason;
      readonly exitCode: number | null;
      readonly signal: string | null;
      /** Calls that were pending on the worker and settled as failures. */
      readonly failedCalls: number;
    }
  | { readonly type: "worker_recycling"; readonly slot: number; readonly pid: number; readonly rssBytes: number };

/** How a worker process ended, with the calls it failed and the bystanders left to re-send. */
export interface WorkerExit {
  readonly reason: WorkerExitReason;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly failedCalls: number;
  /**
   * Bystanders of a death (crashed, deadline, protocol) not yet re-sent: the executor re-sends each once
   * to the replacement (`resend`), or, when there is none (the executor closed), settles it as a bystander. Empty on most exits.
   */
  readonly retry: readonly PendingCall[];
}
