import type { BundleHash, SandboxLimits, TenantId } from "../../src/protocol/index.js";
import type { IsolatePoolOptions, PoolCall, PoolResult, PoolStats } from "./pool-types.js";

/**
 * The in-process isolate manager: one V8 isolate per (tenant, bundle hash), created lazily on the first
 * call, bundle compiled once, one long-lived context. Every call is one synchronous `applySync` with a
 * timeout, strings in and one string out (DESIGN §2). Used by the worker process main and by the inline
 * executor; the only user of isolated-vm.
 *
 * ```ts
 * const pool = new IsolatePool({ maxIsolates: 128 });
 * pool.load(hash, code, { memoryMb: 32, maxResultBytes: 65_536, maxStateBytes: 16_384, maxLogLines: 50, maxLogBytes: 8_192 });
 * const r = pool.call({ tenantId, bundleHash: hash, point: "tool.call", eventJson, ctxJson, timeoutMs: 50 });
 * // r.kind === "replied" → parseGuestReply(point, r.reply, limits) on the host
 * ```
 *
 * Methods never throw for anything a guest does; they throw only on host misuse (after `dispose()`).
 */
export class IsolatePool {
  constructor(options: IsolatePoolOptions = {}) {
    void options;
  }

  /** Makes a bundle known. Idempotent per hash; new limits for a known hash recycle its isolates. */
  load(bundleHash: BundleHash, code: string, limits: SandboxLimits): void {
    void bundleHash;
    void code;
    void limits;
    throw new Error("IsolatePool.load: not implemented yet");
  }

  /** Forgets a bundle and disposes its isolates. */
  unload(bundleHash: BundleHash): void {
    void bundleHash;
    throw new Error("IsolatePool.unload: not implemented yet");
  }

  isLoaded(bundleHash: BundleHash): boolean {
    void bundleHash;
    return false;
  }

  /** Runs one hook call synchronously. `replied` carries the prelude's `GuestReply` JSON string. */
  call(call: PoolCall): PoolResult {
    void call;
    throw new Error("IsolatePool.call: not implemented yet");
  }

  /**
   * Evaluates a loaded bundle in a fresh, throwaway isolate and replies with the prelude's `DescribeReply`
   * JSON string (the default export's keys and whether each is a function); parse it with
   * `parseDescribeReply` (src/protocol).
   */
  describe(tenantId: TenantId, bundleHash: BundleHash, timeoutMs = 1_000): PoolResult {
    void tenantId;
    void bundleHash;
    void timeoutMs;
    throw new Error("IsolatePool.describe: not implemented yet");
  }

  /** Disposes isolates idle past `maxIdleMs`; the worker calls it from a timer. Returns how many. */
  sweep(): number {
    return 0;
  }

  stats(): PoolStats {
    return { isolates: 0, bundles: 0, heapBytes: 0, recycled: 0, evicted: 0 };
  }

  /** Disposes every isolate; later calls throw. */
  dispose(): void {}
}
