import type { BundleHash, SandboxLimits, TenantId } from "../../src/protocol/index.js";

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
   * Keep one isolate with the prelude installed ready per limits, refilled once the pool has been quiet
   * for a few ms after a cold call took it: a tenant's first call then skips isolate creation. [true]
   */
  readonly spare?: boolean;
}

/** One hook call as the pool runs it. Event and ctx are JSON strings the pool moves, never parses. */
export interface PoolCall {
  readonly tenantId: TenantId;
  readonly bundleHash: BundleHash;
  /** A hook point name (`tool.call`); an unknown one fails as `unavailable`. */
  readonly point: string;
  readonly eventJson: string;
  readonly ctxJson: string;
  /**
   * `applySync` timeout of the handler. A cold call loads the bundle first under the bundle's own load
   * timeout (`SandboxLimits.loadTimeoutMs`, default `max(timeoutMs, 1000)`), which this does not cover.
   */
  readonly timeoutMs: number;
}

/** Hears a call's phases: `load` before a cold call loads its bundle, `run` before that call's handler. */
export type PhaseListener = (phase: "load" | "run") => void;

/** Mirrors the `failed` codes of `WorkerResponse` (src/protocol/wire.ts). */
export type PoolFailureCode = "timeout" | "memory_limit" | "unavailable" | "threw";

/**
 * How a pool call ended. `replied` carries the prelude's reply string unparsed (a `GuestReply` for `call`,
 * a `DescribeReply` for `describe`); the host parses it. `failed` is what the isolate could not report
 * itself: a timeout, a memory-limit disposal, an unknown bundle, or a bundle that fails to load.
 * `cpuMs` (from `isolate.cpuTime`) and `wallMs` (this thread's clock) cover the handler only; `loadMs`, on
 * a cold call, is the wall time spent before it creating the isolate and evaluating the bundle (a call
 * whose load failed has `wallMs` 0).
 */
export type PoolResult =
  | {
      readonly kind: "replied";
      readonly reply: string;
      readonly cpuMs: number;
      readonly wallMs: number;
      readonly loadMs?: number;
    }
  | {
      readonly kind: "failed";
      readonly code: PoolFailureCode;
      readonly message: string;
      readonly cpuMs: number;
      readonly wallMs: number;
      readonly loadMs?: number;
    };

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
