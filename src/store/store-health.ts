/**
 * What a store reports about its own reachability. Only a store on a database server (PostgreSQL) ever
 * loses it: while it is lost, `active()` keeps serving the last known active versions.
 */
export type StoreEvent =
  | {
      /** The store stopped answering: runs are served the last known active versions until it is back. */
      readonly type: "store.unreachable";
      readonly store: "postgres";
      /** The driver's reason, without credentials. */
      readonly reason: string;
    }
  | {
      /** The store answers again; every cached head is re-read on its next use. */
      readonly type: "store.reachable";
      readonly store: "postgres";
      /** How long it was unreachable, in ms. */
      readonly downMs: number;
    };

/** Tracks whether the store answers and says so once per change, never once per call. */
export class StoreHealth {
  readonly #onEvent: ((event: StoreEvent) => void) | undefined;
  readonly #now: () => number;
  #lostAt: number | undefined;

  constructor(onEvent: ((event: StoreEvent) => void) | undefined, now: () => number = () => performance.now()) {
    this.#onEvent = onEvent;
    this.#now = now;
  }

  get reachable(): boolean {
    return this.#lostAt === undefined;
  }

  lost(reason: string): void {
    if (this.#lostAt !== undefined) return;
    this.#lostAt = this.#now();
    this.#emit({ type: "store.unreachable", store: "postgres", reason });
  }

  restored(): void {
    if (this.#lostAt === undefined) return;
    const downMs = Math.round(this.#now() - this.#lostAt);
    this.#lostAt = undefined;
    this.#emit({ type: "store.reachable", store: "postgres", downMs });
  }

  #emit(event: StoreEvent): void {
    try {
      this.#onEvent?.(event);
    } catch {
      // A listener's bug must not fail the store call that noticed the change.
    }
  }
}
