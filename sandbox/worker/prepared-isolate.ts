import * as ivm from "./isolated-vm.js";

/**
 * A fresh isolate with the trusted prelude installed and references to its four entry points, before any
 * tenant code ran in it. The only `reference` the pool ever takes on an isolate value is this entry array
 * (DESIGN §2.1 forbids it on values a guest could have shaped; nothing here was).
 */
export interface PreparedIsolate {
  readonly isolate: ivm.Isolate;
  readonly context: ivm.Context;
  readonly call: ivm.Reference;
  readonly collect: ivm.Reference;
  readonly adopt: ivm.Reference;
  readonly describe: ivm.Reference;
}

/** Throws what isolated-vm throws (the isolate is disposed then); the prelude itself is trusted. */
export function prepareIsolate(prelude: string, memoryMb: number, timeoutMs: number): PreparedIsolate {
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  try {
    const context = isolate.createContextSync();
    const entries = isolate
      .compileScriptSync(prelude, { filename: "isohook:prelude" })
      .runSync(context, { reference: true, timeout: timeoutMs });
    const prepared: PreparedIsolate = {
      isolate,
      context,
      call: entries.getSync(0, { reference: true }),
      collect: entries.getSync(1, { reference: true }),
      adopt: entries.getSync(2, { reference: true }),
      describe: entries.getSync(3, { reference: true }),
    };
    entries.release();
    return prepared;
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

const MAX_KINDS = 4;
/** Installing the trusted prelude in a new isolate; only a starved machine takes this long. */
export const PREPARE_TIMEOUT_MS = 5_000;

/** A refill waits for this much quiet: creating an isolate blocks the thread for a few ms. */
const QUIET_MS = 10;

/**
 * Keeps one prepared isolate per (prelude, memory limit) ready, so a tenant's first call skips creating
 * the isolate and installing the prelude (most of a cold start). A spare taken is refilled once the pool
 * has been quiet for `QUIET_MS` (the caller reports activity with `touch()`), so the refill does not delay
 * the calls that follow a cold one; a pool that never rests creates its isolates on the call path, as it
 * would without spares. At most `MAX_KINDS` kinds are kept.
 */
export class SpareIsolates {
  readonly #ready = new Map<string, PreparedIsolate>();
  readonly #wanted = new Map<string, { prelude: string; memoryMb: number }>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #lastActivity = 0;
  #closed = false;

  /** A spare for this kind if one is ready (then a refill is scheduled), else undefined. */
  take(prelude: string, memoryMb: number): PreparedIsolate | undefined {
    const key = `${memoryMb}\u0000${prelude}`;
    const spare = this.#ready.get(key);
    this.#ready.delete(key);
    if (this.#wanted.size + this.#ready.size < MAX_KINDS || this.#wanted.has(key)) {
      this.#wanted.set(key, { prelude, memoryMb });
      this.#arm(QUIET_MS);
    }
    return spare;
  }

  /** Records pool activity: a pending refill waits for quiet. Cheap enough for every call. */
  touch(now: number): void {
    this.#lastActivity = now;
  }

  get size(): number {
    return this.#ready.size;
  }

  dispose(): void {
    this.#closed = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    for (const spare of this.#ready.values()) spare.isolate.dispose();
    this.#ready.clear();
    this.#wanted.clear();
  }

  #arm(delayMs: number): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setTimeout(() => this.#refill(), delayMs);
    this.#timer.unref();
  }

  #refill(): void {
    this.#timer = undefined;
    if (this.#closed) return;
    const quietFor = performance.now() - this.#lastActivity;
    if (quietFor < QUIET_MS) {
      this.#arm(QUIET_MS - quietFor);
      return;
    }
    for (const [key, { prelude, memoryMb }] of this.#wanted) {
      this.#wanted.delete(key);
      if (this.#ready.has(key)) continue;
      try {
        this.#ready.set(key, prepareIsolate(prelude, memoryMb, PREPARE_TIMEOUT_MS));
      } catch {
        // A spare is an optimisation: the next cold call prepares its own isolate and reports any failure.
      }
    }
  }
}
