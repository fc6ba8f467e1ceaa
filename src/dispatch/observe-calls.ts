/**
 * The dispatcher's observe-only calls in flight (queued behind their run's earlier ones, or in the
 * executor), so that `observersSettled()` can wait for them and `close()` can cancel them. Every tracked
 * promise resolves, never rejects: an observer's failure is a record, not an exception.
 */
export class ObserveCalls {
  readonly #controller = new AbortController();
  readonly #pending = new Set<Promise<void>>();

  /** Aborted by `close()`: a queued observe call that sees it does not start, a running one is let go. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  track(call: Promise<void>): void {
    this.#pending.add(call);
    void call.then(() => this.#pending.delete(call));
  }

  /** Resolves once every call tracked so far, and any tracked meanwhile, has ended. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** Cancels what has not started, lets go of what is running, and resolves once all are accounted for. */
  close(): Promise<void> {
    this.#controller.abort(new Error("The dispatcher's observe-only calls were cancelled (close)"));
    return this.settled();
  }
}
