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
