import type { SandboxResult } from "../../src/protocol/index.js";

/** Observe calls a lane holds before it answers new ones `unavailable` (a run of decisions that never pauses). */
export const MAX_QUEUED_OBSERVE_CALLS = 1_024;

/**
 * How long the shard must have had no decision call in flight before an observe call starts. A run's hook
 * points come back to back (host work between them is well under a millisecond), so a burst of decisions
 * passes before any observer takes the worker; the pause of a model call or a slow tool lets them in.
 */
export const OBSERVE_IDLE_MS = 10;

interface Queued {
  readonly send: (askedAt: number) => Promise<SandboxResult>;
  readonly askedAt: number;
  readonly resolve: (result: SandboxResult) => void;
  readonly reject: (reason: unknown) => void;
  readonly signal: AbortSignal | undefined;
}

/** The queued calls of one signal, and the one listener the lane keeps on it for them. */
interface Watched {
  readonly queued: Set<Queued>;
  readonly onAbort: () => void;
}

/**
 * The one place that schedules calls of priority `observe` (observe-only hooks), one lane per shard: an
 * observe call is sent to the shard's worker only once no decision call has been in flight there for
 * `OBSERVE_IDLE_MS`, and at most one observe call is in flight at a time. So an observe call never runs ahead
 * of a decision call waiting for the same worker, a run's back-to-back decisions pass first, and a decision
 * call that arrives while an observer runs waits behind that one call at most (bounded by its timeout).
 * Time held in the lane counts in the call's `queuedMs`. The lane keeps one abort listener per signal, however
 * many of that signal's calls are queued (a run's observers share its signal).
 */
export class ObserveLane {
  #decisions = 0;
  #observing = false;
  #queue: Queued[] = [];
  readonly #watched = new Map<AbortSignal, Watched>();
  #lastDecisionAt = Number.NEGATIVE_INFINITY;
  #idleTimer: NodeJS.Timeout | undefined;
  readonly #idleMs: number;

  constructor(idleMs = OBSERVE_IDLE_MS) {
    this.#idleMs = idleMs;
  }

  /** Counts a decision call in flight on the shard until it settles. */
  decision(call: Promise<SandboxResult>): Promise<SandboxResult> {
    this.decisionStarted();
    call.then(this.decisionSettled, this.decisionSettled);
    return call;
  }

  /**
   * A decision call went out on the shard; `decisionSettled` once it settled. For a caller that already
   * reacts to the call's settling: no promise of the lane's own per call.
   */
  decisionStarted(): void {
    this.#decisions++;
  }

  // One function for every decision call (the hot path): no closure per call.
  readonly decisionSettled = (): void => {
    this.#decisions--;
    // Always stamped: an observe call queued just after this decision must still wait out the idle time.
    this.#lastDecisionAt = performance.now();
    if (this.#queue.length > 0) this.#pump();
  };

  /** Queues an observe call; `send` runs it on the shard's worker, given when it was asked (for `queuedMs`). */
  observe(send: (askedAt: number) => Promise<SandboxResult>, signal: AbortSignal | undefined): Promise<SandboxResult> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#queue.length >= MAX_QUEUED_OBSERVE_CALLS) {
      const message = `${MAX_QUEUED_OBSERVE_CALLS} observe-only calls are already waiting behind decision calls on this worker; this one was dropped`;
      return Promise.resolve({ type: "failed", failure: { code: "unavailable", message }, cpuMs: 0, runMs: 0 });
    }
    return new Promise((resolve, reject) => {
      const entry: Queued = { send, askedAt: performance.now(), resolve, reject, signal };
      if (signal !== undefined) this.#watch(signal, entry);
      this.#queue.push(entry);
      this.#pump();
    });
  }

  #watch(signal: AbortSignal, entry: Queued): void {
    const watched = this.#watched.get(signal);
    if (watched !== undefined) {
      watched.queued.add(entry);
      return;
    }
    const queued = new Set([entry]);
    const onAbort = (): void => {
      this.#watched.delete(signal);
      this.#queue = this.#queue.filter((each) => !queued.has(each));
      for (const each of queued) each.reject(signal.reason);
    };
    this.#watched.set(signal, { queued, onAbort });
    signal.addEventListener("abort", onAbort, { once: true });
  }

  /** The call left the queue: its signal's listener goes with the last of that signal's calls. */
  #unwatch(entry: Queued): void {
    const { signal } = entry;
    const watched = signal === undefined ? undefined : this.#watched.get(signal);
    if (signal === undefined || watched === undefined) return;
    watched.queued.delete(entry);
    if (watched.queued.size > 0) return;
    this.#watched.delete(signal);
    signal.removeEventListener("abort", watched.onAbort);
  }

  /** Rejects every observe call still queued with `reason` (the executor is closing). */
  close(reason: unknown): void {
    const queued = this.#queue;
    this.#queue = [];
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    for (const [signal, watched] of this.#watched) signal.removeEventListener("abort", watched.onAbort);
    this.#watched.clear();
    for (const entry of queued) entry.reject(reason);
  }

  #pump(): void {
    if (this.#observing || this.#decisions > 0 || this.#idleTimer !== undefined || this.#queue.length === 0) return;
    const wait = this.#lastDecisionAt + this.#idleMs - performance.now();
    if (wait > 0) {
      this.#idleTimer = setTimeout(() => {
        this.#idleTimer = undefined;
        this.#pump();
      }, wait);
      return;
    }
    const next = this.#queue.shift();
    if (next === undefined) return;
    this.#unwatch(next);
    this.#observing = true;
    const done = (): void => {
      this.#observing = false;
      this.#pump();
    };
    // The worker honours the signal from here on (it rejects the call when aborted).
    const call = next.send(next.askedAt);
    call.then(next.resolve, next.reject);
    call.then(done, done);
  }
}
