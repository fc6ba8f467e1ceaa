import type { BundleHash } from "../../src/protocol/index.js";
import { disposeQuietly, type LiveIsolate } from "./open-isolate.js";

/** Heap statistics are read on the first call and every this many calls after (a sync call, ~13 µs). */
const HEAP_SAMPLE_EVERY = 256;

/**
 * The pool's live isolates by (tenant, bundle) key, with their budgets: a count, a sum of heaps (sampled
 * every 256 calls) and idleness. Past a budget the least recently used isolate is disposed (evicted);
 * recency is `LiveIsolate.lastUsed`, scanned only when something must be evicted (rare next to calls).
 *
 * It also remembers why a key has no isolate: the keys whose isolate was recycled after the tenant's own
 * failure (or whose load failed on the bundle's code), so the next load of that key is known to be the
 * tenant's doing (`SandboxCost.loadAfterRecycle`). Evictions, bundle reloads and a new process forget it:
 * those loads are not the tenant's. At most `maxIsolates` keys are remembered, the oldest forgotten first.
 */
export class IsolateCache {
  readonly #live = new Map<string, LiveIsolate>();
  /** Keys whose next load the tenant caused, oldest first (a Set keeps insertion order). */
  readonly #recycledKeys = new Set<string>();
  readonly #maxIsolates: number;
  readonly #maxHeapBytes: number;
  #heapBytes = 0;
  #recycled = 0;
  #evicted = 0;

  constructor(maxIsolates: number, maxHeapBytes: number) {
    this.#maxIsolates = maxIsolates;
    this.#maxHeapBytes = maxHeapBytes;
  }

  /** Isolates evicted (count, heap budget or idleness) since the cache was made. */
  get evicted(): number {
    return this.#evicted;
  }

  get(key: string): LiveIsolate | undefined {
    return this.#live.get(key);
  }

  /** Evicts until one more isolate fits the count budget: call before opening one. */
  makeRoom(): void {
    while (this.#live.size >= this.#maxIsolates) this.#evict(this.#leastRecent());
  }

  add(live: LiveIsolate): void {
    this.#live.set(live.key, live);
  }

  /** After a successful call: samples the heap now and then, and evicts others past the heap budget. */
  used(live: LiveIsolate): void {
    if (live.calls++ % HEAP_SAMPLE_EVERY !== 0) return;
    try {
      const heap = live.isolate.getHeapStatisticsSync();
      const bytes = heap.used_heap_size + heap.externally_allocated_size;
      this.#heapBytes += bytes - live.heapBytes;
      live.heapBytes = bytes;
    } catch {
      return;
    }
    while (this.#heapBytes > this.#maxHeapBytes && this.#live.size > 1) this.#evict(this.#leastRecent(live));
  }

  /** Disposes an isolate after a timeout, memory event or broken prelude; the next call recreates it. */
  recycle(live: LiveIsolate): void {
    this.#drop(live);
    this.#recycled++;
    this.markRecycled(live.key);
  }

  /**
   * The next load of `key` is the tenant's doing: its isolate was recycled, or its load failed on the
   * bundle's own code.
   */
  markRecycled(key: string): void {
    this.#recycledKeys.delete(key);
    this.#recycledKeys.add(key);
    if (this.#recycledKeys.size > this.#maxIsolates) {
      for (const oldest of this.#recycledKeys) {
        this.#recycledKeys.delete(oldest);
        break;
      }
    }
  }

  /** Whether the next load of `key` is the tenant's doing (its isolate was recycled); forgets it either way. */
  takeRecycled(key: string): boolean {
    return this.#recycledKeys.delete(key);
  }

  /** Evicts isolates last used at or before `cutoff`; returns how many. */
  sweep(cutoff: number): number {
    let swept = 0;
    for (const live of [...this.#live.values()]) {
      if (live.lastUsed > cutoff) continue;
      this.#evict(live);
      swept++;
    }
    return swept;
  }

  /** Disposes every isolate of a bundle (it was unloaded or reloaded with other code or limits). */
  dropBundle(bundleHash: BundleHash): void {
    for (const live of [...this.#live.values()]) if (live.bundleHash === bundleHash) this.#drop(live);
    const suffix = `\u0000${bundleHash}`;
    for (const key of [...this.#recycledKeys]) if (key.endsWith(suffix)) this.#recycledKeys.delete(key);
  }

  dispose(): void {
    for (const live of this.#live.values()) disposeQuietly(live.isolate);
    this.#live.clear();
    this.#recycledKeys.clear();
    this.#heapBytes = 0;
  }

  stats(): { isolates: number; heapBytes: number; recycled: number; evicted: number } {
    return { isolates: this.#live.size, heapBytes: this.#heapBytes, recycled: this.#recycled, evicted: this.#evicted };
  }

  /** The least recently used isolate other than `except`; the cache holds at least one other when asked. */
  #leastRecent(except?: LiveIsolate): LiveIsolate {
    let oldest: LiveIsolate | undefined;
    for (const live of this.#live.values()) {
      if (live !== except && (oldest === undefined || live.lastUsed < oldest.lastUsed)) oldest = live;
    }
    if (oldest === undefined) throw new Error("IsolateCache: no isolate to evict");
    return oldest;
  }

  #evict(live: LiveIsolate): void {
    this.#drop(live);
    this.#evicted++;
  }

  #drop(live: LiveIsolate): void {
    if (this.#live.get(live.key) === live) this.#live.delete(live.key);
    this.#heapBytes -= live.heapBytes;
    disposeQuietly(live.isolate);
  }
}

/**
 * The cache key of a call's isolate, (tenant, bundle hash, observe): observe-only handlers get an isolate of
 * their own, so an observer's timeout never recycles the deciding one. The last key is kept: a tenant's
 * calls come in runs (a worker groups each read by isolate), and a new key is a concatenation that the
 * cache's `Map` must flatten and hash on every call.
 */
export class IsolateKeys {
  #tenantId = "";
  #bundleHash = "";
  #observe = false;
  #key = "";

  of(tenantId: string, bundleHash: string, observe: boolean): string {
    if (tenantId !== this.#tenantId || bundleHash !== this.#bundleHash || observe !== this.#observe) {
      this.#tenantId = tenantId;
      this.#bundleHash = bundleHash;
      this.#observe = observe;
      this.#key = `${tenantId}\u0000${bundleHash}${observe ? "\u0000observe" : ""}`;
    }
    return this.#key;
  }
}
