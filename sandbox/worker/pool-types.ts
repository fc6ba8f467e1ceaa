import type { SandboxLimits } from "../../src/protocol/index.js";

/** Budgets of an `IsolatePool`. Validated at construction; defaults in brackets. */
export interface IsolatePoolOptions {
  /** Most live isolates; past it the least recently used one is disposed. [256] */
  readonly maxIsolates?: number;
  /** Sum of live isolates' heaps (used + external, as last measured) past which LRU isolates are disposed. [768] */
  readonly maxHeapMb?: number;
  /** `sweep()` disposes isolates idle for longer than this. [300_000] */
  readonly maxIdleMs?: number;
  /** Clock for idle accounting, in ms. [performance.now] */
  readonly now?: () => number;
  /**
   * Keep a few isolates with the prelude installed ready per limits (`SPARES_PER_KIND`), prepared off the
   * thread and refilled between calls: a tenant's first call then skips isolate creation. [true]
   */
  readonly spare?: boolean;
  /**
   * Stop a call when its thread's CPU time reaches its timeout (cpu-guard.ts), where the thread's CPU clock
   * can be read from another thread (Linux); off, only the wall-clock backstop stops it. [true]
   */
  readonly cpuGuard?: boolean;
}

/** Hears a call's phases: `load` before a cold call loads its bundle, `run` before that call's handler. */
export type PhaseListener = (phase: "load" | "run") => void;

/** A snapshot of the pool for the worker's health reports and tests. */
export interface PoolStats {
  readonly isolates: number;
  readonly bundles: number;
  /** Sum of live isolates' heaps (used + external) as last measured, in bytes. */
  readonly heapBytes: number;
  /** Isolates disposed after a timeout, memory event or broken prelude since the pool started. */
  readonly recycled: number;
  /** Isolates disposed by the count/heap budget or idleness since the pool started. */
  readonly evicted: number;
  /** Prepared isolates (prelude installed, no tenant code) waiting for a tenant's first call. */
  readonly spares: number;
}

export type { SandboxLimits };
