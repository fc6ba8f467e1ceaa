import type { WorkerExit } from "./events.js";
import type { WorkerProcess } from "./worker-process.js";

/** Crashes older than this no longer count towards the respawn backoff. */
const CRASH_WINDOW_MS = 60_000;
const BACKOFF_BASE_MS = 100;
const BACKOFF_MAX_MS = 5_000;

/**
 * The respawn delay after the `crashes`-th crash within the window: the first respawn is immediate (a
 * fatal out-of-memory in one hook should cost its neighbours nothing), then 100 ms doubling to 5 s, so a
 * worker that cannot start or is crashed in a loop does not burn the host's CPU.
 */
export function respawnDelayMs(crashes: number): number {
  if (crashes <= 1) return 0;
  return Math.min(BACKOFF_BASE_MS * 2 ** (crashes - 2), BACKOFF_MAX_MS);
}

/**
 * One shard of the pool: the worker its tenants' calls go to now, and the respawn of that worker after it
 * dies. Calls that arrive while no worker is assigned (during a backoff) wait for the next one.
 */
export class WorkerSlot {
  readonly index: number;
  #spawn: (slot: number) => WorkerProcess;
  #current: WorkerProcess | undefined;
  #waiters: ((worker: WorkerProcess | undefined) => void)[] = [];
  #crashes: number[] = [];
  #respawnTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(index: number, spawn: (slot: number) => WorkerProcess) {
    this.index = index;
    this.#spawn = spawn;
    this.#current = spawn(index);
  }

  /** The worker taking this shard's calls, if one is assigned and accepting. */
  get current(): WorkerProcess | undefined {
    const worker = this.#current;
    return worker?.accepting === true ? worker : undefined;
  }

  /** Resolves with the next assigned worker, or undefined once the slot is closed. */
  whenWorker(): Promise<WorkerProcess | undefined> {
    const worker = this.current;
    if (worker !== undefined || this.#closed) return Promise.resolve(worker);
    // A caller is waiting for the respawn: keep the host alive until it happens.
    this.#respawnTimer?.ref();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** Replaces the worker with a fresh one; the old one drains its pending calls, then exits. */
  recycle(): void {
    const old = this.#current;
    if (this.#closed || old === undefined || !old.ready) return;
    this.#assign(this.#spawn(this.index));
    old.retire();
  }

  /** Called for every exit of a worker that served this slot. */
  workerExited(worker: WorkerProcess, exit: WorkerExit): void {
    if (worker !== this.#current) return;
    this.#current = undefined;
    if (this.#closed || exit.reason === "closed" || exit.reason === "recycled") return;
    const now = performance.now();
    this.#crashes = this.#crashes.filter((at) => now - at < CRASH_WINDOW_MS);
    this.#crashes.push(now);
    const delay = respawnDelayMs(this.#crashes.length);
    if (delay === 0) {
      this.#assign(this.#spawn(this.index));
      return;
    }
    this.#respawnTimer = setTimeout(() => {
      this.#respawnTimer = undefined;
      if (!this.#closed) this.#assign(this.#spawn(this.index));
    }, delay);
    this.#respawnTimer.unref();
  }

  close(): void {
    this.#closed = true;
    if (this.#respawnTimer !== undefined) clearTimeout(this.#respawnTimer);
    this.#respawnTimer = undefined;
    this.#release(undefined);
  }

  #assign(worker: WorkerProcess): void {
    this.#current = worker;
    this.#release(worker);
  }

  #release(worker: WorkerProcess | undefined): void {
    const waiters = this.#waiters;
    if (waiters.length === 0) return;
    this.#waiters = [];
    for (const resolve of waiters) resolve(worker);
  }
}
