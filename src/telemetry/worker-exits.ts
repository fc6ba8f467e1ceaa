import type { WorkerEventView } from "./sandbox-metrics.js";

/** Why a worker ended that fails the call it was running: the host killed it, it died, it misbehaved. */
export type WorkerDeath = "deadline" | "crashed" | "protocol";

/**
 * The worker the supervisor ended last, for the span of the call it failed. The process executor settles
 * the calls pending on a worker and then reports its `worker_exited`, both in the one callback of the
 * process's exit; the calls' results reach the dispatcher in the microtasks after it. So a death seen here
 * is the one behind a call failing before the event loop turns (cleared at the next turn), and a call that
 * failed `timeout` or `memory_limit` then is the call the host killed its worker over: nothing in its
 * failure says so, unlike a crash's `sandbox_crashed`.
 */
export class RecentWorkerDeath {
  #last: WorkerDeath | undefined;
  #clearing = false;

  observe(event: WorkerEventView): void {
    if (event.type !== "worker_exited") return;
    const reason = event.reason;
    if (reason !== "deadline" && reason !== "crashed" && reason !== "protocol") return;
    this.#last = reason;
    if (this.#clearing) return;
    this.#clearing = true;
    setImmediate(() => {
      this.#last = undefined;
      this.#clearing = false;
    }).unref?.();
  }

  /** The death reported in this turn of the event loop, if any. */
  get current(): WorkerDeath | undefined {
    return this.#last;
  }
}
